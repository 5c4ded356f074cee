{{- define "win-agent.name" -}}
{{ .Release.Name }}-agent
{{- end }}
