{{/* Helpers of the trainguard chart. */}}

{{/* The chart name, or nameOverride. */}}
{{- define "trainguard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The object names: fullnameOverride, the release name when it contains the chart name, or
     release-chart. It is also the Service name, so it is cut to a DNS-1035 label (63). */}}
{{- define "trainguard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "trainguard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "trainguard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: webhook
{{- end -}}

{{- define "trainguard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 }}
{{ include "trainguard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: trainguard
{{- end -}}

{{- define "trainguard.tlsSecretName" -}}
{{- default (printf "%s-tls" (include "trainguard.fullname" .)) .Values.certificates.secretName -}}
{{- end -}}

{{/* Namespaces the webhooks skip: the configured ones, the release namespace, and cert-manager's
     when it issues the certificate. */}}
{{- define "trainguard.excludedNamespaces" -}}
{{- $ns := concat .Values.webhook.excludeNamespaces (list .Release.Namespace) -}}
{{- if eq .Values.certificates.source "certManager" -}}
{{- $ns = append $ns .Values.certificates.certManager.namespace -}}
{{- end -}}
{{- $ns | uniq | toJson -}}
{{- end -}}

{{/* priorityClassName: the value, else system-cluster-critical when a webhook fails closed. */}}
{{- define "trainguard.priorityClassName" -}}
{{- $w := .Values.webhook -}}
{{- $fail := or (and $w.validate.enabled (eq $w.validate.failurePolicy "Fail")) (and $w.mutate.enabled (eq $w.mutate.failurePolicy "Fail")) -}}
{{- .Values.priorityClassName | default (ternary "system-cluster-critical" "" $fail) -}}
{{- end -}}

{{/* The release whose rules the policy pins: policy.rulesVersion, else X.Y of appVersion. */}}
{{- define "trainguard.rulesVersion" -}}
{{- .Values.policy.rulesVersion | default (regexFind "^[0-9]+[.][0-9]+" .Chart.AppVersion) -}}
{{- end -}}

{{/* metadata.annotations of both webhook configurations (cert-manager CA injection). */}}
{{- define "trainguard.webhookAnnotations" -}}
{{- if eq .Values.certificates.source "certManager" }}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ include "trainguard.fullname" . }}-serving
{{- end }}
{{- end -}}

{{/* clientConfig of a webhook; the argument is a dict with root (the context) and path. */}}
{{- define "trainguard.clientConfig" -}}
{{- $root := .root -}}
clientConfig:
  service:
    name: {{ include "trainguard.fullname" $root }}
    namespace: {{ $root.Release.Namespace }}
    path: {{ .path }}
    port: {{ $root.Values.service.port }}
  {{- if eq $root.Values.certificates.source "secret" }}
  caBundle: {{ required "certificates.caBundle is required with certificates.source=secret (the stdout of `trainguard certs`)" $root.Values.certificates.caBundle }}
  {{- else if ne $root.Values.certificates.source "certManager" }}
  {{- fail "certificates.source must be certManager or secret" }}
  {{- end }}
{{- end -}}

{{/* namespaceSelector of both webhooks. */}}
{{- define "trainguard.namespaceSelector" -}}
namespaceSelector:
  {{- with .Values.webhook.namespaceSelector.matchLabels }}
  matchLabels:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values: {{ include "trainguard.excludedNamespaces" . }}
    - key: trainguard.dev/webhook
      operator: NotIn
      values: [disabled]
    {{- with .Values.webhook.namespaceSelector.matchExpressions }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}
