{{/*
Names and labels: one place for each (the chart's other templates only include these).
*/}}

{{/* The prefix of every object's name: the release name, or fullnameOverride. */}}
{{- define "kubeheal.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kubeheal.selectorLabels" -}}
app.kubernetes.io/name: kubeheal
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "kubeheal.labels" -}}
{{ include "kubeheal.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The operator's ServiceAccount. */}}
{{- define "kubeheal.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kubeheal.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name must name an existing ServiceAccount when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The user name the API server gives the operator's ServiceAccount. */}}
{{- define "kubeheal.operatorUser" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ include "kubeheal.serviceAccountName" . }}
{{- end -}}

{{/* Whether the replicas compete for a Lease: always with more than one replica, and whenever
the operator is sharded (every shard holds a Lease of its own). */}}
{{- define "kubeheal.leaderElect" -}}
{{- if or (gt (int .Values.replicas) 1) .Values.leaderElection.enabled .Values.shards -}}true{{- end -}}
{{- end -}}

{{- define "kubeheal.leaseName" -}}
{{- default (printf "%s-operator" (include "kubeheal.fullname" .)) .Values.leaderElection.leaseName -}}
{{- end -}}

{{- define "kubeheal.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}
{{- end -}}

{{/*
What the operator may do on the resources it reconciles, and nothing more: a ClusterRole's rules,
or each watched namespace's Role's. The cluster tests bind exactly these rules to the operator
under test (tests/cluster/heal_run.rs), so a missing rule fails them.

It may create CodeFixDDS work orders but never patch or update them: setting spec.approval is a
human's decision (seed 002: the worker has no approval authority). The admission policy
(approval-policy.yaml) refuses the operator's identity a decision even if someone grants more.
*/}}
{{- define "kubeheal.operatorRules" -}}
# patch and update: the finalizer kubeheal.dev/cleanup, which removes a deleted run's clone.
# create: the HealRun that executes an approved CodeFixDDS.
- apiGroups: ["kubeheal.dev"]
  resources: ["healruns"]
  verbs: ["get", "list", "watch", "create", "patch", "update"]
- apiGroups: ["kubeheal.dev"]
  resources: ["healruns/status"]
  verbs: ["get", "patch", "update"]
# Owner references on Jobs, ConfigMaps and CodeFixDDS block the HealRun's deletion until they
# are collected, which needs this where OwnerReferencesPermissionEnforcement is enabled.
- apiGroups: ["kubeheal.dev"]
  resources: ["healruns/finalizers"]
  verbs: ["update"]
- apiGroups: ["kubeheal.dev"]
  resources: ["codefixdds"]
  verbs: ["get", "list", "watch", "create"]
# The CodeFixDDS controller writes the status only (phase, validation, execution).
- apiGroups: ["kubeheal.dev"]
  resources: ["codefixdds/status"]
  verbs: ["get", "patch", "update"]
# The HealRun executing an approved order is owned by it (blockOwnerDeletion).
- apiGroups: ["kubeheal.dev"]
  resources: ["codefixdds/finalizers"]
  verbs: ["update"]
# The /healer API files ingested errors as HealerTickets and counts their occurrences; the
# HealerTicket controller writes the rest of their status. Never their spec.decision.
- apiGroups: ["kubeheal.dev"]
  resources: ["healertickets"]
  verbs: ["get", "list", "watch", "create"]
- apiGroups: ["kubeheal.dev"]
  resources: ["healertickets/status"]
  verbs: ["get", "patch", "update"]
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["get", "list", "watch", "create", "patch"]
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch", "create", "patch"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch"]
- apiGroups: [""]
  resources: ["pods/log"]
  verbs: ["get"]
# Git tokens and healer API keys named by a HealRun's secretRefs.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get"]
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end -}}
