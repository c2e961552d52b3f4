{{- define "runlore.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "runlore.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "runlore.labels" -}}
app.kubernetes.io/name: {{ include "runlore.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "runlore.selectorLabels" -}}
app.kubernetes.io/name: {{ include "runlore.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "runlore.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "runlore.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "runlore.receiverSecret" -}}
{{- default (printf "%s-receiver-token" (include "runlore.fullname" .)) .Values.receiver.token.existingSecret -}}
{{- end -}}

{{- define "runlore.webhookService" -}}
{{- printf "%s-webhook" (include "runlore.fullname" .) -}}
{{- end -}}

{{- define "runlore.webhookCertSecret" -}}
{{- printf "%s-webhook-cert" (include "runlore.fullname" .) -}}
{{- end -}}

{{- define "runlore.stampKeySecret" -}}
{{- default (printf "%s-stamp-key" (include "runlore.fullname" .)) .Values.webhook.stampKey.existingSecret -}}
{{- end -}}

{{- define "runlore.webhookConfiguration" -}}
{{- printf "%s-verbs" (include "runlore.fullname" .) -}}
{{- end -}}
