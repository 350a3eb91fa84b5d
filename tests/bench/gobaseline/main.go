// Command gobaseline is the yardstick `make bench` sets trainguard against: the smallest
// honest Go net/http admission webhook. It decodes the AdmissionReview and the whole object with
// encoding/json (as a webhook built on k8s.io/api types does before any rule runs), judges
// nothing, and answers allowed with the request's uid. Standard library only, so it builds
// offline; run it with GOMAXPROCS=1 on one core, as the benchmark runs trainguard.
package main

import (
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
)

type request struct {
	UID       string          `json:"uid"`
	Kind      json.RawMessage `json:"kind"`
	Operation string          `json:"operation"`
	Namespace string          `json:"namespace"`
	Object    json.RawMessage `json:"object"`
	OldObject json.RawMessage `json:"oldObject"`
}

type review struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Request    *request `json:"request"`
}

type response struct {
	UID     string `json:"uid"`
	Allowed bool   `json:"allowed"`
}

type answer struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Response   response `json:"response"`
}

func admit(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 7<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var rv review
	if err := json.Unmarshal(body, &rv); err != nil || rv.Request == nil {
		http.Error(w, "malformed AdmissionReview", http.StatusBadRequest)
		return
	}
	var obj, old map[string]interface{}
	if err := json.Unmarshal(rv.Request.Object, &obj); err != nil {
		http.Error(w, "malformed object", http.StatusBadRequest)
		return
	}
	if len(rv.Request.OldObject) > 0 {
		if err := json.Unmarshal(rv.Request.OldObject, &old); err != nil {
			http.Error(w, "malformed oldObject", http.StatusBadRequest)
			return
		}
	}
	out, _ := json.Marshal(answer{APIVersion: rv.APIVersion, Kind: "AdmissionReview",
		Response: response{UID: rv.Request.UID, Allowed: true}})
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8443", "address to serve HTTPS on")
	cert := flag.String("cert", "tls.crt", "serving certificate (PEM)")
	key := flag.String("key", "tls.key", "private key (PEM)")
	flag.Parse()
	http.HandleFunc("/validate", admit)
	http.HandleFunc("/mutate", admit)
	log.Fatal(http.ListenAndServeTLS(*listen, *cert, *key, nil))
}
