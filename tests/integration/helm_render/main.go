// helm_render renders a Helm chart's templates like `helm template` for the functions the
// trainguard chart uses: Go's text/template with sprig (the engine Helm uses) plus Helm's include,
// required, fail, toYaml, fromYaml and .Files.Get. Helm is not installable here; the chart tests
// (tests/integration/test_deploy.sh, test_monitoring.sh) build this with Debian's Go packages.
// Usage: helm_render CHART NAMESPACE RELEASE [VALUES.yaml...]  ($KUBE_VERSION: the cluster version)
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"gopkg.in/yaml.v3"
)

func merge(dst, src map[string]interface{}) {
	for k, v := range src {
		sm, ok1 := v.(map[string]interface{})
		dm, ok2 := dst[k].(map[string]interface{})
		if ok1 && ok2 {
			merge(dm, sm)
		} else {
			dst[k] = v
		}
	}
}

func load(path string, into map[string]interface{}) {
	b, err := os.ReadFile(path)
	if err == nil {
		err = yaml.Unmarshal(b, &into)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, path+":", err)
		os.Exit(1)
	}
}

// The cluster version .Capabilities.KubeVersion reports ($KUBE_VERSION, else v1.30.0).
func kubeVersion() string {
	if v := os.Getenv("KUBE_VERSION"); v != "" {
		return v
	}
	return "v1.30.0"
}

// chartFiles is .Files: the chart's own files, read by path relative to the chart directory.
type chartFiles string

// Get returns the file's content, or "" when it cannot be read (as Helm does).
func (c chartFiles) Get(name string) string {
	b, err := os.ReadFile(filepath.Join(string(c), filepath.FromSlash(name)))
	if err != nil {
		return ""
	}
	return string(b)
}

func main() {
	chart, ns, rel := os.Args[1], os.Args[2], os.Args[3]
	vals, meta := map[string]interface{}{}, map[string]interface{}{}
	load(filepath.Join(chart, "values.yaml"), vals)
	load(filepath.Join(chart, "Chart.yaml"), meta)
	for _, f := range os.Args[4:] {
		o := map[string]interface{}{}
		load(f, o)
		merge(vals, o)
	}
	ctx := map[string]interface{}{
		"Values":  vals,
		"Release": map[string]interface{}{"Name": rel, "Namespace": ns, "Service": "Helm"},
		"Chart": map[string]interface{}{"Name": meta["name"], "Version": meta["version"],
			"AppVersion": meta["appVersion"]},
		"Files": chartFiles(chart),
		"Capabilities": map[string]interface{}{
			"KubeVersion": map[string]interface{}{"Version": kubeVersion()},
		},
	}
	t := template.New("chart").Option("missingkey=zero")
	fm := sprig.TxtFuncMap()
	fm["include"] = func(name string, data interface{}) (string, error) {
		var buf bytes.Buffer
		err := t.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	fm["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil || v == "" {
			return nil, errors.New(msg)
		}
		return v, nil
	}
	fm["fail"] = func(msg string) (string, error) { return "", errors.New(msg) }
	fm["toYaml"] = func(v interface{}) string {
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		enc.Encode(v)
		return strings.TrimSuffix(buf.String(), "\n")
	}
	fm["fromYaml"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	t.Funcs(fm)
	files, _ := filepath.Glob(filepath.Join(chart, "templates", "*"))
	sort.Strings(files)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if _, err := t.New(filepath.Base(f)).Parse(string(b)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasPrefix(base, "_") {
			continue
		}
		var buf bytes.Buffer
		if err := t.ExecuteTemplate(&buf, base, ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if base != "NOTES.txt" {
			fmt.Printf("---\n# Source: %s\n%s\n", base, buf.String())
		}
	}
}
