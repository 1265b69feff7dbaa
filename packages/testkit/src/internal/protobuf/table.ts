/**
 * Protobuf message table for the built-in kinds the test API server serves: for each message, its fields as
 * `[jsonName, fieldNumber, type, flags?]`. Facts (field numbers, wire types, JSON names, omitempty) taken from
 * upstream `generated.proto` and `types.go` of kubernetes/api @ 10b39a39bcee and
 * kubernetes/apimachinery @ eed236ceee2c (meta/v1, runtime, util/intstr, api/resource), tabulated by a script;
 * the discovery messages (meta/v1 `APIResourceList`…, apidiscovery/v2) checked against the answers of a real
 * kube-apiserver v1.36.3.
 *
 * Types: a proto scalar (`string`, `int32`, `int64`, `bool`, `bytes`, `double`) or a message of this table.
 * Flags: `r` repeated, `m` map<string, type>, `i` inlined in JSON (Go embedded struct), `z` omitted from JSON
 * when zero (Go `omitempty` on a non-pointer). Messages listed in `listWrappers` are Go named slices (JSON: the
 * array of their `items`).
 *
 * @internal
 */

/** One field: JSON name, field number, type, flags. */
export type Field = readonly [json: string, number: number, type: string, flags?: string]

/** Every message reachable from the served kinds. */
export const messages: Readonly<Record<string, ReadonlyArray<Field>>> = {
  "apidiscovery.v2.APIGroupDiscovery": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["versions", 2, "apidiscovery.v2.APIVersionDiscovery", "r"]
  ],
  "apidiscovery.v2.APIGroupDiscoveryList": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["items", 2, "apidiscovery.v2.APIGroupDiscovery", "r"]
  ],
  "apidiscovery.v2.APIResourceDiscovery": [
    ["resource", 1, "string"],
    ["responseKind", 2, "meta.v1.GroupVersionKind"],
    ["scope", 3, "string"],
    ["singularResource", 4, "string"],
    ["verbs", 5, "string", "r"],
    ["shortNames", 6, "string", "r"],
    ["categories", 7, "string", "r"],
    ["subresources", 8, "apidiscovery.v2.APISubresourceDiscovery", "r"]
  ],
  "apidiscovery.v2.APISubresourceDiscovery": [
    ["subresource", 1, "string"],
    ["responseKind", 2, "meta.v1.GroupVersionKind"],
    ["acceptedTypes", 3, "meta.v1.GroupVersionKind", "r"],
    ["verbs", 4, "string", "r"]
  ],
  "apidiscovery.v2.APIVersionDiscovery": [
    ["version", 1, "string"],
    ["resources", 2, "apidiscovery.v2.APIResourceDiscovery", "r"],
    ["freshness", 3, "string", "z"]
  ],
  "apps.v1.Deployment": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["spec", 2, "apps.v1.DeploymentSpec"],
    ["status", 3, "apps.v1.DeploymentStatus"]
  ],
  "apps.v1.DeploymentCondition": [
    ["type", 1, "string"],
    ["status", 2, "string"],
    ["lastUpdateTime", 6, "meta.v1.Time"],
    ["lastTransitionTime", 7, "meta.v1.Time"],
    ["reason", 4, "string", "z"],
    ["message", 5, "string", "z"]
  ],
  "apps.v1.DeploymentList": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["items", 2, "apps.v1.Deployment", "r"]
  ],
  "apps.v1.DeploymentSpec": [
    ["replicas", 1, "int32"],
    ["selector", 2, "meta.v1.LabelSelector"],
    ["template", 3, "core.v1.PodTemplateSpec"],
    ["strategy", 4, "apps.v1.DeploymentStrategy"],
    ["minReadySeconds", 5, "int32", "z"],
    ["revisionHistoryLimit", 6, "int32"],
    ["paused", 7, "bool", "z"],
    ["progressDeadlineSeconds", 9, "int32"]
  ],
  "apps.v1.DeploymentStatus": [
    ["observedGeneration", 1, "int64", "z"],
    ["replicas", 2, "int32", "z"],
    ["updatedReplicas", 3, "int32", "z"],
    ["readyReplicas", 7, "int32", "z"],
    ["availableReplicas", 4, "int32", "z"],
    ["unavailableReplicas", 5, "int32", "z"],
    ["terminatingReplicas", 9, "int32"],
    ["conditions", 6, "apps.v1.DeploymentCondition", "r"],
    ["collisionCount", 8, "int32"]
  ],
  "apps.v1.DeploymentStrategy": [
    ["type", 1, "string", "z"],
    ["rollingUpdate", 2, "apps.v1.RollingUpdateDeployment"]
  ],
  "apps.v1.ReplicaSet": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["spec", 2, "apps.v1.ReplicaSetSpec"],
    ["status", 3, "apps.v1.ReplicaSetStatus"]
  ],
  "apps.v1.ReplicaSetCondition": [
    ["type", 1, "string"],
    ["status", 2, "string"],
    ["lastTransitionTime", 3, "meta.v1.Time"],
    ["reason", 4, "string", "z"],
    ["message", 5, "string", "z"]
  ],
  "apps.v1.ReplicaSetList": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["items", 2, "apps.v1.ReplicaSet", "r"]
  ],
  "apps.v1.ReplicaSetSpec": [
    ["replicas", 1, "int32"],
    ["minReadySeconds", 4, "int32", "z"],
    ["selector", 2, "meta.v1.LabelSelector"],
    ["template", 3, "core.v1.PodTemplateSpec"]
  ],
  "apps.v1.ReplicaSetStatus": [
    ["replicas", 1, "int32"],
    ["fullyLabeledReplicas", 2, "int32", "z"],
    ["readyReplicas", 4, "int32", "z"],
    ["availableReplicas", 5, "int32", "z"],
    ["terminatingReplicas", 7, "int32"],
    ["observedGeneration", 3, "int64", "z"],
    ["conditions", 6, "apps.v1.ReplicaSetCondition", "r"]
  ],
  "apps.v1.RollingUpdateDeployment": [
    ["maxUnavailable", 1, "intstr.IntOrString"],
    ["maxSurge", 2, "intstr.IntOrString"]
  ],
  "apps.v1.RollingUpdateStatefulSetStrategy": [
    ["partition", 1, "int32"],
    ["maxUnavailable", 2, "intstr.IntOrString"]
  ],
  "apps.v1.StatefulSet": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["spec", 2, "apps.v1.StatefulSetSpec"],
    ["status", 3, "apps.v1.StatefulSetStatus"]
  ],
  "apps.v1.StatefulSetCondition": [
    ["type", 1, "string"],
    ["status", 2, "string"],
    ["lastTransitionTime", 3, "meta.v1.Time"],
    ["reason", 4, "string", "z"],
    ["message", 5, "string", "z"]
  ],
  "apps.v1.StatefulSetList": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["items", 2, "apps.v1.StatefulSet", "r"]
  ],
  "apps.v1.StatefulSetOrdinals": [
    ["start", 1, "int32"]
  ],
  "apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy": [
    ["whenDeleted", 1, "string", "z"],
    ["whenScaled", 2, "string", "z"]
  ],
  "apps.v1.StatefulSetSpec": [
    ["replicas", 1, "int32"],
    ["selector", 2, "meta.v1.LabelSelector"],
    ["template", 3, "core.v1.PodTemplateSpec"],
    ["volumeClaimTemplates", 4, "core.v1.PersistentVolumeClaim", "r"],
    ["serviceName", 5, "string"],
    ["podManagementPolicy", 6, "string", "z"],
    ["updateStrategy", 7, "apps.v1.StatefulSetUpdateStrategy"],
    ["revisionHistoryLimit", 8, "int32"],
    ["minReadySeconds", 9, "int32", "z"],
    ["persistentVolumeClaimRetentionPolicy", 10, "apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy"],
    ["ordinals", 11, "apps.v1.StatefulSetOrdinals"]
  ],
  "apps.v1.StatefulSetStatus": [
    ["observedGeneration", 1, "int64", "z"],
    ["replicas", 2, "int32"],
    ["readyReplicas", 3, "int32", "z"],
    ["currentReplicas", 4, "int32", "z"],
    ["updatedReplicas", 5, "int32", "z"],
    ["currentRevision", 6, "string", "z"],
    ["updateRevision", 7, "string", "z"],
    ["collisionCount", 9, "int32"],
    ["conditions", 10, "apps.v1.StatefulSetCondition", "r"],
    ["availableReplicas", 11, "int32"]
  ],
  "apps.v1.StatefulSetUpdateStrategy": [
    ["type", 1, "string", "z"],
    ["rollingUpdate", 2, "apps.v1.RollingUpdateStatefulSetStrategy"]
  ],
  "authorization.v1.FieldSelectorAttributes": [
    ["rawSelector", 1, "string", "z"],
    ["requirements", 2, "meta.v1.FieldSelectorRequirement", "r"]
  ],
  "authorization.v1.LabelSelectorAttributes": [
    ["rawSelector", 1, "string", "z"],
    ["requirements", 2, "meta.v1.LabelSelectorRequirement", "r"]
  ],
  "authorization.v1.NonResourceAttributes": [
    ["path", 1, "string", "z"],
    ["verb", 2, "string", "z"]
  ],
  "authorization.v1.NonResourceRule": [
    ["verbs", 1, "string", "r"],
    ["nonResourceURLs", 2, "string", "r"]
  ],
  "authorization.v1.ResourceAttributes": [
    ["namespace", 1, "string", "z"],
    ["verb", 2, "string", "z"],
    ["group", 3, "string", "z"],
    ["version", 4, "string", "z"],
    ["resource", 5, "string", "z"],
    ["subresource", 6, "string", "z"],
    ["name", 7, "string", "z"],
    ["fieldSelector", 8, "authorization.v1.FieldSelectorAttributes"],
    ["labelSelector", 9, "authorization.v1.LabelSelectorAttributes"]
  ],
  "authorization.v1.ResourceRule": [
    ["verbs", 1, "string", "r"],
    ["apiGroups", 2, "string", "r"],
    ["resources", 3, "string", "r"],
    ["resourceNames", 4, "string", "r"]
  ],
  "authorization.v1.SelfSubjectAccessReview": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["spec", 2, "authorization.v1.SelfSubjectAccessReviewSpec"],
    ["status", 3, "authorization.v1.SubjectAccessReviewStatus"]
  ],
  "authorization.v1.SelfSubjectAccessReviewSpec": [
    ["resourceAttributes", 1, "authorization.v1.ResourceAttributes"],
    ["nonResourceAttributes", 2, "authorization.v1.NonResourceAttributes"]
  ],
  "authorization.v1.SelfSubjectRulesReview": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["spec", 2, "authorization.v1.SelfSubjectRulesReviewSpec"],
    ["status", 3, "authorization.v1.SubjectRulesReviewStatus"]
  ],
  "authorization.v1.SelfSubjectRulesReviewSpec": [
    ["namespace", 1, "string", "z"]
  ],
  "authorization.v1.SubjectAccessReviewStatus": [
    ["allowed", 1, "bool"],
    ["denied", 4, "bool", "z"],
    ["reason", 2, "string", "z"],
    ["evaluationError", 3, "string", "z"]
  ],
  "authorization.v1.SubjectRulesReviewStatus": [
    ["resourceRules", 1, "authorization.v1.ResourceRule", "r"],
    ["nonResourceRules", 2, "authorization.v1.NonResourceRule", "r"],
    ["incomplete", 3, "bool"],
    ["evaluationError", 4, "string", "z"]
  ],
  "autoscaling.v1.Scale": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["spec", 2, "autoscaling.v1.ScaleSpec"],
    ["status", 3, "autoscaling.v1.ScaleStatus"]
  ],
  "autoscaling.v1.ScaleSpec": [
    ["replicas", 1, "int32", "z"]
  ],
  "autoscaling.v1.ScaleStatus": [
    ["replicas", 1, "int32"],
    ["selector", 2, "string", "z"]
  ],
  "coordination.v1.Lease": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["spec", 2, "coordination.v1.LeaseSpec"]
  ],
  "coordination.v1.LeaseList": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["items", 2, "coordination.v1.Lease", "r"]
  ],
  "coordination.v1.LeaseSpec": [
    ["holderIdentity", 1, "string"],
    ["leaseDurationSeconds", 2, "int32"],
    ["acquireTime", 3, "meta.v1.MicroTime"],
    ["renewTime", 4, "meta.v1.MicroTime"],
    ["leaseTransitions", 5, "int32"],
    ["strategy", 6, "string"],
    ["preferredHolder", 7, "string"]
  ],
  "core.v1.AWSElasticBlockStoreVolumeSource": [
    ["volumeID", 1, "string"],
    ["fsType", 2, "string", "z"],
    ["partition", 3, "int32", "z"],
    ["readOnly", 4, "bool", "z"]
  ],
  "core.v1.Affinity": [
    ["nodeAffinity", 1, "core.v1.NodeAffinity"],
    ["podAffinity", 2, "core.v1.PodAffinity"],
    ["podAntiAffinity", 3, "core.v1.PodAntiAffinity"]
  ],
  "core.v1.AppArmorProfile": [
    ["type", 1, "string"],
    ["localhostProfile", 2, "string"]
  ],
  "core.v1.AzureDiskVolumeSource": [
    ["diskName", 1, "string"],
    ["diskURI", 2, "string"],
    ["cachingMode", 3, "string"],
    ["fsType", 4, "string"],
    ["readOnly", 5, "bool"],
    ["kind", 6, "string"]
  ],
  "core.v1.AzureFileVolumeSource": [
    ["secretName", 1, "string"],
    ["shareName", 2, "string"],
    ["readOnly", 3, "bool", "z"]
  ],
  "core.v1.CSIVolumeSource": [
    ["driver", 1, "string"],
    ["readOnly", 2, "bool"],
    ["fsType", 3, "string"],
    ["volumeAttributes", 4, "string", "m"],
    ["nodePublishSecretRef", 5, "core.v1.LocalObjectReference"]
  ],
  "core.v1.Capabilities": [
    ["add", 1, "string", "r"],
    ["drop", 2, "string", "r"]
  ],
  "core.v1.CephFSVolumeSource": [
    ["monitors", 1, "string", "r"],
    ["path", 2, "string", "z"],
    ["user", 3, "string", "z"],
    ["secretFile", 4, "string", "z"],
    ["secretRef", 5, "core.v1.LocalObjectReference"],
    ["readOnly", 6, "bool", "z"]
  ],
  "core.v1.CinderVolumeSource": [
    ["volumeID", 1, "string"],
    ["fsType", 2, "string", "z"],
    ["readOnly", 3, "bool", "z"],
    ["secretRef", 4, "core.v1.LocalObjectReference"]
  ],
  "core.v1.ClientIPConfig": [
    ["timeoutSeconds", 1, "int32"]
  ],
  "core.v1.ClusterTrustBundleProjection": [
    ["name", 1, "string"],
    ["signerName", 2, "string"],
    ["labelSelector", 3, "meta.v1.LabelSelector"],
    ["optional", 5, "bool"],
    ["path", 4, "string"],
    ["user", 6, "int64"]
  ],
  "core.v1.ConfigMap": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["immutable", 4, "bool"],
    ["data", 2, "string", "m"],
    ["binaryData", 3, "bytes", "m"]
  ],
  "core.v1.ConfigMapEnvSource": [
    ["localObjectReference", 1, "core.v1.LocalObjectReference", "i"],
    ["optional", 2, "bool"]
  ],
  "core.v1.ConfigMapKeySelector": [
    ["localObjectReference", 1, "core.v1.LocalObjectReference", "i"],
    ["key", 2, "string"],
    ["optional", 3, "bool"]
  ],
  "core.v1.ConfigMapList": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["items", 2, "core.v1.ConfigMap", "r"]
  ],
  "core.v1.ConfigMapProjection": [
    ["localObjectReference", 1, "core.v1.LocalObjectReference", "i"],
    ["items", 2, "core.v1.KeyToPath", "r"],
    ["optional", 4, "bool"]
  ],
  "core.v1.ConfigMapVolumeSource": [
    ["localObjectReference", 1, "core.v1.LocalObjectReference", "i"],
    ["items", 2, "core.v1.KeyToPath", "r"],
    ["defaultMode", 3, "int32"],
    ["optional", 4, "bool"],
    ["defaultUser", 5, "int64"]
  ],
  "core.v1.Container": [
    ["name", 1, "string"],
    ["image", 2, "string", "z"],
    ["command", 3, "string", "r"],
    ["args", 4, "string", "r"],
    ["workingDir", 5, "string", "z"],
    ["ports", 6, "core.v1.ContainerPort", "r"],
    ["envFrom", 19, "core.v1.EnvFromSource", "r"],
    ["env", 7, "core.v1.EnvVar", "r"],
    ["resources", 8, "core.v1.ResourceRequirements"],
    ["resizePolicy", 23, "core.v1.ContainerResizePolicy", "r"],
    ["restartPolicy", 24, "string"],
    ["restartPolicyRules", 25, "core.v1.ContainerRestartRule", "r"],
    ["volumeMounts", 9, "core.v1.VolumeMount", "r"],
    ["volumeDevices", 21, "core.v1.VolumeDevice", "r"],
    ["livenessProbe", 10, "core.v1.Probe"],
    ["readinessProbe", 11, "core.v1.Probe"],
    ["startupProbe", 22, "core.v1.Probe"],
    ["lifecycle", 12, "core.v1.Lifecycle"],
    ["terminationMessagePath", 13, "string", "z"],
    ["terminationMessagePolicy", 20, "string", "z"],
    ["imagePullPolicy", 14, "string", "z"],
    ["securityContext", 15, "core.v1.SecurityContext"],
    ["stdin", 16, "bool", "z"],
    ["stdinOnce", 17, "bool", "z"],
    ["tty", 18, "bool", "z"]
  ],
  "core.v1.ContainerExtendedResourceRequest": [
    ["containerName", 1, "string"],
    ["resourceName", 2, "string"],
    ["requestName", 3, "string"]
  ],
  "core.v1.ContainerPort": [
    ["name", 1, "string", "z"],
    ["hostPort", 2, "int32", "z"],
    ["containerPort", 3, "int32"],
    ["protocol", 4, "string", "z"],
    ["hostIP", 5, "string", "z"]
  ],
  "core.v1.ContainerResizePolicy": [
    ["resourceName", 1, "string"],
    ["restartPolicy", 2, "string"]
  ],
  "core.v1.ContainerRestartRule": [
    ["action", 1, "string", "z"],
    ["exitCodes", 2, "core.v1.ContainerRestartRuleOnExitCodes"]
  ],
  "core.v1.ContainerRestartRuleOnExitCodes": [
    ["operator", 1, "string", "z"],
    ["values", 2, "int32", "r"]
  ],
  "core.v1.ContainerState": [
    ["waiting", 1, "core.v1.ContainerStateWaiting"],
    ["running", 2, "core.v1.ContainerStateRunning"],
    ["terminated", 3, "core.v1.ContainerStateTerminated"]
  ],
  "core.v1.ContainerStateRunning": [
    ["startedAt", 1, "meta.v1.Time"]
  ],
  "core.v1.ContainerStateTerminated": [
    ["exitCode", 1, "int32"],
    ["signal", 2, "int32", "z"],
    ["reason", 3, "string", "z"],
    ["message", 4, "string", "z"],
    ["startedAt", 5, "meta.v1.Time"],
    ["finishedAt", 6, "meta.v1.Time"],
    ["containerID", 7, "string", "z"]
  ],
  "core.v1.ContainerStateWaiting": [
    ["reason", 1, "string", "z"],
    ["message", 2, "string", "z"]
  ],
  "core.v1.ContainerStatus": [
    ["name", 1, "string"],
    ["state", 2, "core.v1.ContainerState"],
    ["lastState", 3, "core.v1.ContainerState"],
    ["ready", 4, "bool"],
    ["restartCount", 5, "int32"],
    ["image", 6, "string"],
    ["imageID", 7, "string"],
    ["containerID", 8, "string", "z"],
    ["started", 9, "bool"],
    ["allocatedResources", 10, "resource.Quantity", "m"],
    ["resources", 11, "core.v1.ResourceRequirements"],
    ["volumeMounts", 12, "core.v1.VolumeMountStatus", "r"],
    ["user", 13, "core.v1.ContainerUser"],
    ["allocatedResourcesStatus", 14, "core.v1.ResourceStatus", "r"],
    ["stopSignal", 15, "string"]
  ],
  "core.v1.ContainerUser": [
    ["linux", 1, "core.v1.LinuxContainerUser"]
  ],
  "core.v1.DownwardAPIProjection": [
    ["items", 1, "core.v1.DownwardAPIVolumeFile", "r"]
  ],
  "core.v1.DownwardAPIVolumeFile": [
    ["path", 1, "string"],
    ["fieldRef", 2, "core.v1.ObjectFieldSelector"],
    ["resourceFieldRef", 3, "core.v1.ResourceFieldSelector"],
    ["mode", 4, "int32"],
    ["user", 5, "int64"]
  ],
  "core.v1.DownwardAPIVolumeSource": [
    ["items", 1, "core.v1.DownwardAPIVolumeFile", "r"],
    ["defaultMode", 2, "int32"],
    ["defaultUser", 3, "int64"]
  ],
  "core.v1.EmptyDirVolumeSource": [
    ["medium", 1, "string", "z"],
    ["sizeLimit", 2, "resource.Quantity"],
    ["mode", 3, "int32"]
  ],
  "core.v1.EnvFromSource": [
    ["prefix", 1, "string", "z"],
    ["configMapRef", 2, "core.v1.ConfigMapEnvSource"],
    ["secretRef", 3, "core.v1.SecretEnvSource"]
  ],
  "core.v1.EnvVar": [
    ["name", 1, "string"],
    ["value", 2, "string", "z"],
    ["valueFrom", 3, "core.v1.EnvVarSource"]
  ],
  "core.v1.EnvVarSource": [
    ["fieldRef", 1, "core.v1.ObjectFieldSelector"],
    ["resourceFieldRef", 2, "core.v1.ResourceFieldSelector"],
    ["configMapKeyRef", 3, "core.v1.ConfigMapKeySelector"],
    ["secretKeyRef", 4, "core.v1.SecretKeySelector"],
    ["fileKeyRef", 5, "core.v1.FileKeySelector"]
  ],
  "core.v1.EphemeralContainer": [
    ["ephemeralContainerCommon", 1, "core.v1.EphemeralContainerCommon", "i"],
    ["targetContainerName", 2, "string", "z"]
  ],
  "core.v1.EphemeralContainerCommon": [
    ["name", 1, "string"],
    ["image", 2, "string", "z"],
    ["command", 3, "string", "r"],
    ["args", 4, "string", "r"],
    ["workingDir", 5, "string", "z"],
    ["ports", 6, "core.v1.ContainerPort", "r"],
    ["envFrom", 19, "core.v1.EnvFromSource", "r"],
    ["env", 7, "core.v1.EnvVar", "r"],
    ["resources", 8, "core.v1.ResourceRequirements"],
    ["resizePolicy", 23, "core.v1.ContainerResizePolicy", "r"],
    ["restartPolicy", 24, "string"],
    ["restartPolicyRules", 25, "core.v1.ContainerRestartRule", "r"],
    ["volumeMounts", 9, "core.v1.VolumeMount", "r"],
    ["volumeDevices", 21, "core.v1.VolumeDevice", "r"],
    ["livenessProbe", 10, "core.v1.Probe"],
    ["readinessProbe", 11, "core.v1.Probe"],
    ["startupProbe", 22, "core.v1.Probe"],
    ["lifecycle", 12, "core.v1.Lifecycle"],
    ["terminationMessagePath", 13, "string", "z"],
    ["terminationMessagePolicy", 20, "string", "z"],
    ["imagePullPolicy", 14, "string", "z"],
    ["securityContext", 15, "core.v1.SecurityContext"],
    ["stdin", 16, "bool", "z"],
    ["stdinOnce", 17, "bool", "z"],
    ["tty", 18, "bool", "z"]
  ],
  "core.v1.EphemeralVolumeSource": [
    ["volumeClaimTemplate", 1, "core.v1.PersistentVolumeClaimTemplate"]
  ],
  "core.v1.Event": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["involvedObject", 2, "core.v1.ObjectReference"],
    ["reason", 3, "string", "z"],
    ["message", 4, "string", "z"],
    ["source", 5, "core.v1.EventSource"],
    ["firstTimestamp", 6, "meta.v1.Time"],
    ["lastTimestamp", 7, "meta.v1.Time"],
    ["count", 8, "int32", "z"],
    ["type", 9, "string", "z"],
    ["eventTime", 10, "meta.v1.MicroTime"],
    ["series", 11, "core.v1.EventSeries"],
    ["action", 12, "string", "z"],
    ["related", 13, "core.v1.ObjectReference"],
    ["reportingComponent", 14, "string"],
    ["reportingInstance", 15, "string"]
  ],
  "core.v1.EventList": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["items", 2, "core.v1.Event", "r"]
  ],
  "core.v1.EventSeries": [
    ["count", 1, "int32", "z"],
    ["lastObservedTime", 2, "meta.v1.MicroTime"]
  ],
  "core.v1.EventSource": [
    ["component", 1, "string", "z"],
    ["host", 2, "string", "z"]
  ],
  "core.v1.EvictionResponder": [
    ["name", 1, "string"],
    ["priority", 2, "int32"]
  ],
  "core.v1.ExecAction": [
    ["command", 1, "string", "r"]
  ],
  "core.v1.FCVolumeSource": [
    ["targetWWNs", 1, "string", "r"],
    ["lun", 2, "int32"],
    ["fsType", 3, "string", "z"],
    ["readOnly", 4, "bool", "z"],
    ["wwids", 5, "string", "r"]
  ],
  "core.v1.FileKeySelector": [
    ["volumeName", 1, "string"],
    ["path", 2, "string"],
    ["key", 3, "string"],
    ["optional", 4, "bool"]
  ],
  "core.v1.FlexVolumeSource": [
    ["driver", 1, "string"],
    ["fsType", 2, "string", "z"],
    ["secretRef", 3, "core.v1.LocalObjectReference"],
    ["readOnly", 4, "bool", "z"],
    ["options", 5, "string", "m"]
  ],
  "core.v1.FlockerVolumeSource": [
    ["datasetName", 1, "string", "z"],
    ["datasetUUID", 2, "string", "z"]
  ],
  "core.v1.GCEPersistentDiskVolumeSource": [
    ["pdName", 1, "string"],
    ["fsType", 2, "string", "z"],
    ["partition", 3, "int32", "z"],
    ["readOnly", 4, "bool", "z"]
  ],
  "core.v1.GRPCAction": [
    ["port", 1, "int32"],
    ["service", 2, "string"],
    ["mode", 3, "string"]
  ],
  "core.v1.GitRepoVolumeSource": [
    ["repository", 1, "string"],
    ["revision", 2, "string", "z"],
    ["directory", 3, "string", "z"]
  ],
  "core.v1.GlusterfsVolumeSource": [
    ["endpoints", 1, "string"],
    ["path", 2, "string"],
    ["readOnly", 3, "bool", "z"]
  ],
  "core.v1.HTTPGetAction": [
    ["path", 1, "string", "z"],
    ["port", 2, "intstr.IntOrString"],
    ["host", 3, "string", "z"],
    ["scheme", 4, "string", "z"],
    ["httpHeaders", 5, "core.v1.HTTPHeader", "r"],
    ["protocol", 6, "string"]
  ],
  "core.v1.HTTPHeader": [
    ["name", 1, "string"],
    ["value", 2, "string"]
  ],
  "core.v1.HostAlias": [
    ["ip", 1, "string"],
    ["hostnames", 2, "string", "r"]
  ],
  "core.v1.HostIP": [
    ["ip", 1, "string"]
  ],
  "core.v1.HostPathVolumeSource": [
    ["path", 1, "string"],
    ["type", 2, "string"]
  ],
  "core.v1.ISCSIVolumeSource": [
    ["targetPortal", 1, "string"],
    ["iqn", 2, "string"],
    ["lun", 3, "int32"],
    ["iscsiInterface", 4, "string", "z"],
    ["fsType", 5, "string", "z"],
    ["readOnly", 6, "bool", "z"],
    ["portals", 7, "string", "r"],
    ["chapAuthDiscovery", 8, "bool", "z"],
    ["chapAuthSession", 11, "bool", "z"],
    ["secretRef", 10, "core.v1.LocalObjectReference"],
    ["initiatorName", 12, "string"]
  ],
  "core.v1.ImageVolumeSource": [
    ["reference", 1, "string", "z"],
    ["pullPolicy", 2, "string", "z"]
  ],
  "core.v1.ImageVolumeStatus": [
    ["imageRef", 1, "string", "z"]
  ],
  "core.v1.KeyToPath": [
    ["key", 1, "string"],
    ["path", 2, "string"],
    ["mode", 3, "int32"],
    ["user", 4, "int64"]
  ],
  "core.v1.Lifecycle": [
    ["postStart", 1, "core.v1.LifecycleHandler"],
    ["preStop", 2, "core.v1.LifecycleHandler"],
    ["stopSignal", 3, "string"]
  ],
  "core.v1.LifecycleHandler": [
    ["exec", 1, "core.v1.ExecAction"],
    ["httpGet", 2, "core.v1.HTTPGetAction"],
    ["tcpSocket", 3, "core.v1.TCPSocketAction"],
    ["sleep", 4, "core.v1.SleepAction"]
  ],
  "core.v1.LinuxContainerUser": [
    ["uid", 1, "int64"],
    ["gid", 2, "int64"],
    ["supplementalGroups", 3, "int64", "r"]
  ],
  "core.v1.LoadBalancerIngress": [
    ["ip", 1, "string", "z"],
    ["hostname", 2, "string", "z"],
    ["ipMode", 3, "string"],
    ["ports", 4, "core.v1.PortStatus", "r"]
  ],
  "core.v1.LoadBalancerStatus": [
    ["ingress", 1, "core.v1.LoadBalancerIngress", "r"]
  ],
  "core.v1.LocalObjectReference": [
    ["name", 1, "string", "z"]
  ],
  "core.v1.ModifyVolumeStatus": [
    ["targetVolumeAttributesClassName", 1, "string", "z"],
    ["status", 2, "string"]
  ],
  "core.v1.NFSVolumeSource": [
    ["server", 1, "string"],
    ["path", 2, "string"],
    ["readOnly", 3, "bool", "z"]
  ],
  "core.v1.Namespace": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["spec", 2, "core.v1.NamespaceSpec"],
    ["status", 3, "core.v1.NamespaceStatus"]
  ],
  "core.v1.NamespaceCondition": [
    ["type", 1, "string"],
    ["status", 2, "string"],
    ["lastTransitionTime", 4, "meta.v1.Time"],
    ["reason", 5, "string", "z"],
    ["message", 6, "string", "z"]
  ],
  "core.v1.NamespaceList": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["items", 2, "core.v1.Namespace", "r"]
  ],
  "core.v1.NamespaceSpec": [
    ["finalizers", 1, "string", "r"]
  ],
  "core.v1.NamespaceStatus": [
    ["phase", 1, "string", "z"],
    ["conditions", 2, "core.v1.NamespaceCondition", "r"]
  ],
  "core.v1.NodeAffinity": [
    ["requiredDuringSchedulingIgnoredDuringExecution", 1, "core.v1.NodeSelector"],
    ["preferredDuringSchedulingIgnoredDuringExecution", 2, "core.v1.PreferredSchedulingTerm", "r"]
  ],
  "core.v1.NodeAllocatableMappedResources": [
    ["name", 1, "string"],
    ["quantity", 2, "resource.Quantity"]
  ],
  "core.v1.NodeAllocatableOverheadResources": [
    ["name", 1, "string"],
    ["perPod", 2, "resource.Quantity"],
    ["perContainer", 3, "resource.Quantity"]
  ],
  "core.v1.NodeAllocatableResourceClaimStatus": [
    ["resourceClaimName", 1, "string"],
    ["containers", 2, "string", "r"],
    ["mapping", 4, "core.v1.NodeAllocatableMappedResources", "r"],
    ["overhead", 5, "core.v1.NodeAllocatableOverheadResources", "r"]
  ],
  "core.v1.NodeSelector": [
    ["nodeSelectorTerms", 1, "core.v1.NodeSelectorTerm", "r"]
  ],
  "core.v1.NodeSelectorRequirement": [
    ["key", 1, "string"],
    ["operator", 2, "string"],
    ["values", 3, "string", "r"]
  ],
  "core.v1.NodeSelectorTerm": [
    ["matchExpressions", 1, "core.v1.NodeSelectorRequirement", "r"],
    ["matchFields", 2, "core.v1.NodeSelectorRequirement", "r"]
  ],
  "core.v1.ObjectFieldSelector": [
    ["apiVersion", 1, "string", "z"],
    ["fieldPath", 2, "string"]
  ],
  "core.v1.ObjectReference": [
    ["kind", 1, "string", "z"],
    ["namespace", 2, "string", "z"],
    ["name", 3, "string", "z"],
    ["uid", 4, "string", "z"],
    ["apiVersion", 5, "string", "z"],
    ["resourceVersion", 6, "string", "z"],
    ["fieldPath", 7, "string", "z"]
  ],
  "core.v1.PersistentVolumeClaim": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["spec", 2, "core.v1.PersistentVolumeClaimSpec"],
    ["status", 3, "core.v1.PersistentVolumeClaimStatus"]
  ],
  "core.v1.PersistentVolumeClaimCondition": [
    ["type", 1, "string"],
    ["status", 2, "string"],
    ["lastProbeTime", 3, "meta.v1.Time"],
    ["lastTransitionTime", 4, "meta.v1.Time"],
    ["reason", 5, "string", "z"],
    ["message", 6, "string", "z"]
  ],
  "core.v1.PersistentVolumeClaimSpec": [
    ["accessModes", 1, "string", "r"],
    ["selector", 4, "meta.v1.LabelSelector"],
    ["resources", 2, "core.v1.VolumeResourceRequirements"],
    ["volumeName", 3, "string", "z"],
    ["storageClassName", 5, "string"],
    ["volumeMode", 6, "string"],
    ["dataSource", 7, "core.v1.TypedLocalObjectReference"],
    ["dataSourceRef", 8, "core.v1.TypedObjectReference"],
    ["volumeAttributesClassName", 9, "string"]
  ],
  "core.v1.PersistentVolumeClaimStatus": [
    ["phase", 1, "string", "z"],
    ["accessModes", 2, "string", "r"],
    ["capacity", 3, "resource.Quantity", "m"],
    ["conditions", 4, "core.v1.PersistentVolumeClaimCondition", "r"],
    ["allocatedResources", 5, "resource.Quantity", "m"],
    ["allocatedResourceStatuses", 7, "string", "m"],
    ["currentVolumeAttributesClassName", 8, "string"],
    ["modifyVolumeStatus", 9, "core.v1.ModifyVolumeStatus"],
    ["healthStatus", 10, "core.v1.VolumeHealthStatus"]
  ],
  "core.v1.PersistentVolumeClaimTemplate": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["spec", 2, "core.v1.PersistentVolumeClaimSpec"]
  ],
  "core.v1.PersistentVolumeClaimVolumeSource": [
    ["claimName", 1, "string"],
    ["readOnly", 2, "bool", "z"]
  ],
  "core.v1.PhotonPersistentDiskVolumeSource": [
    ["pdID", 1, "string"],
    ["fsType", 2, "string", "z"]
  ],
  "core.v1.Pod": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["spec", 2, "core.v1.PodSpec"],
    ["status", 3, "core.v1.PodStatus"]
  ],
  "core.v1.PodAffinity": [
    ["requiredDuringSchedulingIgnoredDuringExecution", 1, "core.v1.PodAffinityTerm", "r"],
    ["preferredDuringSchedulingIgnoredDuringExecution", 2, "core.v1.WeightedPodAffinityTerm", "r"]
  ],
  "core.v1.PodAffinityTerm": [
    ["labelSelector", 1, "meta.v1.LabelSelector"],
    ["namespaces", 2, "string", "r"],
    ["topologyKey", 3, "string"],
    ["namespaceSelector", 4, "meta.v1.LabelSelector"],
    ["matchLabelKeys", 5, "string", "r"],
    ["mismatchLabelKeys", 6, "string", "r"]
  ],
  "core.v1.PodAntiAffinity": [
    ["requiredDuringSchedulingIgnoredDuringExecution", 1, "core.v1.PodAffinityTerm", "r"],
    ["preferredDuringSchedulingIgnoredDuringExecution", 2, "core.v1.WeightedPodAffinityTerm", "r"]
  ],
  "core.v1.PodCertificateProjection": [
    ["signerName", 1, "string", "z"],
    ["keyType", 2, "string", "z"],
    ["maxExpirationSeconds", 3, "int32"],
    ["credentialBundlePath", 4, "string", "z"],
    ["keyPath", 5, "string", "z"],
    ["certificateChainPath", 6, "string", "z"],
    ["userAnnotations", 7, "string", "m"],
    ["user", 8, "int64"]
  ],
  "core.v1.PodCondition": [
    ["type", 1, "string"],
    ["observedGeneration", 7, "int64", "z"],
    ["status", 2, "string"],
    ["lastProbeTime", 3, "meta.v1.Time"],
    ["lastTransitionTime", 4, "meta.v1.Time"],
    ["reason", 5, "string", "z"],
    ["message", 6, "string", "z"]
  ],
  "core.v1.PodDNSConfig": [
    ["nameservers", 1, "string", "r"],
    ["searches", 2, "string", "r"],
    ["options", 3, "core.v1.PodDNSConfigOption", "r"]
  ],
  "core.v1.PodDNSConfigOption": [
    ["name", 1, "string", "z"],
    ["value", 2, "string"]
  ],
  "core.v1.PodExtendedResourceClaimStatus": [
    ["requestMappings", 1, "core.v1.ContainerExtendedResourceRequest", "r"],
    ["resourceClaimName", 2, "string"]
  ],
  "core.v1.PodIP": [
    ["ip", 1, "string"]
  ],
  "core.v1.PodList": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["items", 2, "core.v1.Pod", "r"]
  ],
  "core.v1.PodOS": [
    ["name", 1, "string"]
  ],
  "core.v1.PodReadinessGate": [
    ["conditionType", 1, "string"]
  ],
  "core.v1.PodResourceClaim": [
    ["name", 1, "string"],
    ["resourceClaimName", 3, "string"],
    ["resourceClaimTemplateName", 4, "string"]
  ],
  "core.v1.PodResourceClaimStatus": [
    ["name", 1, "string"],
    ["resourceClaimName", 2, "string"]
  ],
  "core.v1.PodSchedulingGate": [
    ["name", 1, "string"]
  ],
  "core.v1.PodSchedulingGroup": [
    ["podGroupName", 1, "string"]
  ],
  "core.v1.PodSecurityContext": [
    ["seLinuxOptions", 1, "core.v1.SELinuxOptions"],
    ["windowsOptions", 8, "core.v1.WindowsSecurityContextOptions"],
    ["runAsUser", 2, "int64"],
    ["runAsGroup", 6, "int64"],
    ["runAsNonRoot", 3, "bool"],
    ["supplementalGroups", 4, "int64", "r"],
    ["supplementalGroupsPolicy", 12, "string"],
    ["fsGroup", 5, "int64"],
    ["sysctls", 7, "core.v1.Sysctl", "r"],
    ["fsGroupChangePolicy", 9, "string"],
    ["seccompProfile", 10, "core.v1.SeccompProfile"],
    ["appArmorProfile", 11, "core.v1.AppArmorProfile"],
    ["seLinuxChangePolicy", 13, "string"]
  ],
  "core.v1.PodSpec": [
    ["volumes", 1, "core.v1.Volume", "r"],
    ["initContainers", 20, "core.v1.Container", "r"],
    ["containers", 2, "core.v1.Container", "r"],
    ["ephemeralContainers", 34, "core.v1.EphemeralContainer", "r"],
    ["restartPolicy", 3, "string", "z"],
    ["terminationGracePeriodSeconds", 4, "int64"],
    ["activeDeadlineSeconds", 5, "int64"],
    ["dnsPolicy", 6, "string", "z"],
    ["nodeSelector", 7, "string", "m"],
    ["serviceAccountName", 8, "string", "z"],
    ["serviceAccount", 9, "string", "z"],
    ["automountServiceAccountToken", 21, "bool"],
    ["nodeName", 10, "string", "z"],
    ["hostNetwork", 11, "bool", "z"],
    ["hostPID", 12, "bool", "z"],
    ["hostIPC", 13, "bool", "z"],
    ["shareProcessNamespace", 27, "bool"],
    ["securityContext", 14, "core.v1.PodSecurityContext"],
    ["imagePullSecrets", 15, "core.v1.LocalObjectReference", "r"],
    ["hostname", 16, "string", "z"],
    ["subdomain", 17, "string", "z"],
    ["affinity", 18, "core.v1.Affinity"],
    ["schedulerName", 19, "string", "z"],
    ["tolerations", 22, "core.v1.Toleration", "r"],
    ["hostAliases", 23, "core.v1.HostAlias", "r"],
    ["priorityClassName", 24, "string", "z"],
    ["priority", 25, "int32"],
    ["dnsConfig", 26, "core.v1.PodDNSConfig"],
    ["readinessGates", 28, "core.v1.PodReadinessGate", "r"],
    ["runtimeClassName", 29, "string"],
    ["enableServiceLinks", 30, "bool"],
    ["preemptionPolicy", 31, "string"],
    ["overhead", 32, "resource.Quantity", "m"],
    ["topologySpreadConstraints", 33, "core.v1.TopologySpreadConstraint", "r"],
    ["setHostnameAsFQDN", 35, "bool"],
    ["os", 36, "core.v1.PodOS"],
    ["hostUsers", 37, "bool"],
    ["schedulingGates", 38, "core.v1.PodSchedulingGate", "r"],
    ["resourceClaims", 39, "core.v1.PodResourceClaim", "r"],
    ["resources", 40, "core.v1.ResourceRequirements"],
    ["hostnameOverride", 41, "string"],
    ["schedulingGroup", 43, "core.v1.PodSchedulingGroup"],
    ["evictionResponders", 44, "core.v1.EvictionResponder", "r"]
  ],
  "core.v1.PodStatus": [
    ["observedGeneration", 17, "int64", "z"],
    ["phase", 1, "string", "z"],
    ["conditions", 2, "core.v1.PodCondition", "r"],
    ["message", 3, "string", "z"],
    ["reason", 4, "string", "z"],
    ["nominatedNodeName", 11, "string", "z"],
    ["hostIP", 5, "string", "z"],
    ["hostIPs", 16, "core.v1.HostIP", "r"],
    ["podIP", 6, "string", "z"],
    ["podIPs", 12, "core.v1.PodIP", "r"],
    ["startTime", 7, "meta.v1.Time"],
    ["initContainerStatuses", 10, "core.v1.ContainerStatus", "r"],
    ["containerStatuses", 8, "core.v1.ContainerStatus", "r"],
    ["qosClass", 9, "string", "z"],
    ["ephemeralContainerStatuses", 13, "core.v1.ContainerStatus", "r"],
    ["resize", 14, "string", "z"],
    ["resourceClaimStatuses", 15, "core.v1.PodResourceClaimStatus", "r"],
    ["extendedResourceClaimStatus", 18, "core.v1.PodExtendedResourceClaimStatus"],
    ["allocatedResources", 19, "resource.Quantity", "m"],
    ["resources", 20, "core.v1.ResourceRequirements"],
    ["nodeAllocatableResourceClaimStatuses", 21, "core.v1.NodeAllocatableResourceClaimStatus", "r"],
    ["volumeHealth", 22, "core.v1.PodVolumeHealth", "r"]
  ],
  "core.v1.PodTemplateSpec": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["spec", 2, "core.v1.PodSpec"]
  ],
  "core.v1.PodVolumeHealth": [
    ["name", 1, "string"],
    ["healthConditions", 2, "core.v1.VolumeHealthCondition", "r"],
    ["lastTransitionTime", 3, "meta.v1.Time"]
  ],
  "core.v1.PortStatus": [
    ["port", 1, "int32"],
    ["protocol", 2, "string"],
    ["error", 3, "string"]
  ],
  "core.v1.PortworxVolumeSource": [
    ["volumeID", 1, "string"],
    ["fsType", 2, "string", "z"],
    ["readOnly", 3, "bool", "z"]
  ],
  "core.v1.PreferredSchedulingTerm": [
    ["weight", 1, "int32"],
    ["preference", 2, "core.v1.NodeSelectorTerm"]
  ],
  "core.v1.Probe": [
    ["handler", 1, "core.v1.ProbeHandler", "i"],
    ["initialDelaySeconds", 2, "int32", "z"],
    ["timeoutSeconds", 3, "int32", "z"],
    ["periodSeconds", 4, "int32", "z"],
    ["successThreshold", 5, "int32", "z"],
    ["failureThreshold", 6, "int32", "z"],
    ["terminationGracePeriodSeconds", 7, "int64"]
  ],
  "core.v1.ProbeHandler": [
    ["exec", 1, "core.v1.ExecAction"],
    ["httpGet", 2, "core.v1.HTTPGetAction"],
    ["tcpSocket", 3, "core.v1.TCPSocketAction"],
    ["grpc", 4, "core.v1.GRPCAction"]
  ],
  "core.v1.ProjectedVolumeSource": [
    ["sources", 1, "core.v1.VolumeProjection", "r"],
    ["defaultMode", 2, "int32"],
    ["defaultUser", 3, "int64"]
  ],
  "core.v1.QuobyteVolumeSource": [
    ["registry", 1, "string"],
    ["volume", 2, "string"],
    ["readOnly", 3, "bool", "z"],
    ["user", 4, "string", "z"],
    ["group", 5, "string", "z"],
    ["tenant", 6, "string", "z"]
  ],
  "core.v1.RBDVolumeSource": [
    ["monitors", 1, "string", "r"],
    ["image", 2, "string"],
    ["fsType", 3, "string", "z"],
    ["pool", 4, "string", "z"],
    ["user", 5, "string", "z"],
    ["keyring", 6, "string", "z"],
    ["secretRef", 7, "core.v1.LocalObjectReference"],
    ["readOnly", 8, "bool", "z"]
  ],
  "core.v1.ResourceClaim": [
    ["name", 1, "string"],
    ["request", 2, "string", "z"]
  ],
  "core.v1.ResourceFieldSelector": [
    ["containerName", 1, "string", "z"],
    ["resource", 2, "string"],
    ["divisor", 3, "resource.Quantity"]
  ],
  "core.v1.ResourceHealth": [
    ["resourceID", 1, "string"],
    ["health", 2, "string", "z"],
    ["message", 6, "string"]
  ],
  "core.v1.ResourceRequirements": [
    ["limits", 1, "resource.Quantity", "m"],
    ["requests", 2, "resource.Quantity", "m"],
    ["claims", 3, "core.v1.ResourceClaim", "r"]
  ],
  "core.v1.ResourceStatus": [
    ["name", 1, "string"],
    ["resources", 2, "core.v1.ResourceHealth", "r"]
  ],
  "core.v1.SELinuxOptions": [
    ["user", 1, "string", "z"],
    ["role", 2, "string", "z"],
    ["type", 3, "string", "z"],
    ["level", 4, "string", "z"]
  ],
  "core.v1.ScaleIOVolumeSource": [
    ["gateway", 1, "string"],
    ["system", 2, "string"],
    ["secretRef", 3, "core.v1.LocalObjectReference"],
    ["sslEnabled", 4, "bool", "z"],
    ["protectionDomain", 5, "string", "z"],
    ["storagePool", 6, "string", "z"],
    ["storageMode", 7, "string", "z"],
    ["volumeName", 8, "string", "z"],
    ["fsType", 9, "string", "z"],
    ["readOnly", 10, "bool", "z"]
  ],
  "core.v1.SeccompProfile": [
    ["type", 1, "string"],
    ["localhostProfile", 2, "string"]
  ],
  "core.v1.Secret": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["immutable", 5, "bool"],
    ["data", 2, "bytes", "m"],
    ["stringData", 4, "string", "m"],
    ["type", 3, "string", "z"]
  ],
  "core.v1.SecretEnvSource": [
    ["localObjectReference", 1, "core.v1.LocalObjectReference", "i"],
    ["optional", 2, "bool"]
  ],
  "core.v1.SecretKeySelector": [
    ["localObjectReference", 1, "core.v1.LocalObjectReference", "i"],
    ["key", 2, "string"],
    ["optional", 3, "bool"]
  ],
  "core.v1.SecretList": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["items", 2, "core.v1.Secret", "r"]
  ],
  "core.v1.SecretProjection": [
    ["localObjectReference", 1, "core.v1.LocalObjectReference", "i"],
    ["items", 2, "core.v1.KeyToPath", "r"],
    ["optional", 4, "bool"]
  ],
  "core.v1.SecretVolumeSource": [
    ["secretName", 1, "string", "z"],
    ["items", 2, "core.v1.KeyToPath", "r"],
    ["defaultMode", 3, "int32"],
    ["optional", 4, "bool"],
    ["defaultUser", 5, "int64"]
  ],
  "core.v1.SecurityContext": [
    ["capabilities", 1, "core.v1.Capabilities"],
    ["privileged", 2, "bool"],
    ["seLinuxOptions", 3, "core.v1.SELinuxOptions"],
    ["windowsOptions", 10, "core.v1.WindowsSecurityContextOptions"],
    ["runAsUser", 4, "int64"],
    ["runAsGroup", 8, "int64"],
    ["runAsNonRoot", 5, "bool"],
    ["readOnlyRootFilesystem", 6, "bool"],
    ["allowPrivilegeEscalation", 7, "bool"],
    ["procMount", 9, "string"],
    ["seccompProfile", 11, "core.v1.SeccompProfile"],
    ["appArmorProfile", 12, "core.v1.AppArmorProfile"]
  ],
  "core.v1.Service": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["spec", 2, "core.v1.ServiceSpec"],
    ["status", 3, "core.v1.ServiceStatus"]
  ],
  "core.v1.ServiceAccountTokenProjection": [
    ["audience", 1, "string", "z"],
    ["expirationSeconds", 2, "int64"],
    ["path", 3, "string"],
    ["user", 4, "int64"]
  ],
  "core.v1.ServiceList": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["items", 2, "core.v1.Service", "r"]
  ],
  "core.v1.ServicePort": [
    ["name", 1, "string", "z"],
    ["protocol", 2, "string", "z"],
    ["appProtocol", 6, "string"],
    ["port", 3, "int32"],
    ["targetPort", 4, "intstr.IntOrString"],
    ["nodePort", 5, "int32", "z"]
  ],
  "core.v1.ServiceSpec": [
    ["ports", 1, "core.v1.ServicePort", "r"],
    ["selector", 2, "string", "m"],
    ["clusterIP", 3, "string", "z"],
    ["clusterIPs", 18, "string", "r"],
    ["type", 4, "string", "z"],
    ["externalIPs", 5, "string", "r"],
    ["sessionAffinity", 7, "string", "z"],
    ["loadBalancerIP", 8, "string", "z"],
    ["loadBalancerSourceRanges", 9, "string", "r"],
    ["externalName", 10, "string", "z"],
    ["externalTrafficPolicy", 11, "string", "z"],
    ["healthCheckNodePort", 12, "int32", "z"],
    ["publishNotReadyAddresses", 13, "bool", "z"],
    ["sessionAffinityConfig", 14, "core.v1.SessionAffinityConfig"],
    ["ipFamilies", 19, "string", "r"],
    ["ipFamilyPolicy", 17, "string"],
    ["allocateLoadBalancerNodePorts", 20, "bool"],
    ["loadBalancerClass", 21, "string"],
    ["internalTrafficPolicy", 22, "string"],
    ["trafficDistribution", 23, "string"]
  ],
  "core.v1.ServiceStatus": [
    ["loadBalancer", 1, "core.v1.LoadBalancerStatus"],
    ["conditions", 2, "meta.v1.Condition", "r"]
  ],
  "core.v1.SessionAffinityConfig": [
    ["clientIP", 1, "core.v1.ClientIPConfig"]
  ],
  "core.v1.SleepAction": [
    ["seconds", 1, "int64"]
  ],
  "core.v1.StorageOSVolumeSource": [
    ["volumeName", 1, "string", "z"],
    ["volumeNamespace", 2, "string", "z"],
    ["fsType", 3, "string", "z"],
    ["readOnly", 4, "bool", "z"],
    ["secretRef", 5, "core.v1.LocalObjectReference"]
  ],
  "core.v1.Sysctl": [
    ["name", 1, "string"],
    ["value", 2, "string"]
  ],
  "core.v1.TCPSocketAction": [
    ["port", 1, "intstr.IntOrString"],
    ["host", 2, "string", "z"]
  ],
  "core.v1.Toleration": [
    ["key", 1, "string", "z"],
    ["operator", 2, "string", "z"],
    ["value", 3, "string", "z"],
    ["effect", 4, "string", "z"],
    ["tolerationSeconds", 5, "int64"]
  ],
  "core.v1.TopologySpreadConstraint": [
    ["maxSkew", 1, "int32"],
    ["topologyKey", 2, "string"],
    ["whenUnsatisfiable", 3, "string"],
    ["labelSelector", 4, "meta.v1.LabelSelector"],
    ["minDomains", 5, "int32"],
    ["nodeAffinityPolicy", 6, "string"],
    ["nodeTaintsPolicy", 7, "string"],
    ["matchLabelKeys", 8, "string", "r"]
  ],
  "core.v1.TypedLocalObjectReference": [
    ["apiGroup", 1, "string"],
    ["kind", 2, "string"],
    ["name", 3, "string"]
  ],
  "core.v1.TypedObjectReference": [
    ["apiGroup", 1, "string"],
    ["kind", 2, "string"],
    ["name", 3, "string"],
    ["namespace", 4, "string"]
  ],
  "core.v1.Volume": [
    ["name", 1, "string"],
    ["volumeSource", 2, "core.v1.VolumeSource", "i"]
  ],
  "core.v1.VolumeDevice": [
    ["name", 1, "string"],
    ["devicePath", 2, "string"]
  ],
  "core.v1.VolumeHealthCondition": [
    ["status", 1, "string"],
    ["reason", 2, "string"],
    ["message", 3, "string", "z"]
  ],
  "core.v1.VolumeHealthStatus": [
    ["healthConditions", 1, "core.v1.VolumeHealthCondition", "r"],
    ["lastTransitionTime", 2, "meta.v1.Time"]
  ],
  "core.v1.VolumeMount": [
    ["name", 1, "string"],
    ["readOnly", 2, "bool", "z"],
    ["recursiveReadOnly", 7, "string"],
    ["mountPath", 3, "string"],
    ["subPath", 4, "string", "z"],
    ["mountPropagation", 5, "string"],
    ["subPathExpr", 6, "string", "z"],
    ["bindMountOptions", 8, "string", "r"]
  ],
  "core.v1.VolumeMountStatus": [
    ["name", 1, "string"],
    ["mountPath", 2, "string"],
    ["readOnly", 3, "bool", "z"],
    ["recursiveReadOnly", 4, "string"],
    ["volumeStatus", 5, "core.v1.VolumeStatus"]
  ],
  "core.v1.VolumeProjection": [
    ["secret", 1, "core.v1.SecretProjection"],
    ["downwardAPI", 2, "core.v1.DownwardAPIProjection"],
    ["configMap", 3, "core.v1.ConfigMapProjection"],
    ["serviceAccountToken", 4, "core.v1.ServiceAccountTokenProjection"],
    ["clusterTrustBundle", 5, "core.v1.ClusterTrustBundleProjection"],
    ["podCertificate", 6, "core.v1.PodCertificateProjection"]
  ],
  "core.v1.VolumeResourceRequirements": [
    ["limits", 1, "resource.Quantity", "m"],
    ["requests", 2, "resource.Quantity", "m"]
  ],
  "core.v1.VolumeSource": [
    ["hostPath", 1, "core.v1.HostPathVolumeSource"],
    ["emptyDir", 2, "core.v1.EmptyDirVolumeSource"],
    ["gcePersistentDisk", 3, "core.v1.GCEPersistentDiskVolumeSource"],
    ["awsElasticBlockStore", 4, "core.v1.AWSElasticBlockStoreVolumeSource"],
    ["gitRepo", 5, "core.v1.GitRepoVolumeSource"],
    ["secret", 6, "core.v1.SecretVolumeSource"],
    ["nfs", 7, "core.v1.NFSVolumeSource"],
    ["iscsi", 8, "core.v1.ISCSIVolumeSource"],
    ["glusterfs", 9, "core.v1.GlusterfsVolumeSource"],
    ["persistentVolumeClaim", 10, "core.v1.PersistentVolumeClaimVolumeSource"],
    ["rbd", 11, "core.v1.RBDVolumeSource"],
    ["flexVolume", 12, "core.v1.FlexVolumeSource"],
    ["cinder", 13, "core.v1.CinderVolumeSource"],
    ["cephfs", 14, "core.v1.CephFSVolumeSource"],
    ["flocker", 15, "core.v1.FlockerVolumeSource"],
    ["downwardAPI", 16, "core.v1.DownwardAPIVolumeSource"],
    ["fc", 17, "core.v1.FCVolumeSource"],
    ["azureFile", 18, "core.v1.AzureFileVolumeSource"],
    ["configMap", 19, "core.v1.ConfigMapVolumeSource"],
    ["vsphereVolume", 20, "core.v1.VsphereVirtualDiskVolumeSource"],
    ["quobyte", 21, "core.v1.QuobyteVolumeSource"],
    ["azureDisk", 22, "core.v1.AzureDiskVolumeSource"],
    ["photonPersistentDisk", 23, "core.v1.PhotonPersistentDiskVolumeSource"],
    ["projected", 26, "core.v1.ProjectedVolumeSource"],
    ["portworxVolume", 24, "core.v1.PortworxVolumeSource"],
    ["scaleIO", 25, "core.v1.ScaleIOVolumeSource"],
    ["storageos", 27, "core.v1.StorageOSVolumeSource"],
    ["csi", 28, "core.v1.CSIVolumeSource"],
    ["ephemeral", 29, "core.v1.EphemeralVolumeSource"],
    ["image", 30, "core.v1.ImageVolumeSource"]
  ],
  "core.v1.VolumeStatus": [
    ["image", 1, "core.v1.ImageVolumeStatus"]
  ],
  "core.v1.VsphereVirtualDiskVolumeSource": [
    ["volumePath", 1, "string"],
    ["fsType", 2, "string", "z"],
    ["storagePolicyName", 3, "string", "z"],
    ["storagePolicyID", 4, "string", "z"]
  ],
  "core.v1.WeightedPodAffinityTerm": [
    ["weight", 1, "int32"],
    ["podAffinityTerm", 2, "core.v1.PodAffinityTerm"]
  ],
  "core.v1.WindowsSecurityContextOptions": [
    ["gmsaCredentialSpecName", 1, "string"],
    ["gmsaCredentialSpec", 2, "string"],
    ["runAsUserName", 3, "string"],
    ["hostProcess", 4, "bool"]
  ],
  "events.v1.Event": [
    ["metadata", 1, "meta.v1.ObjectMeta"],
    ["eventTime", 2, "meta.v1.MicroTime"],
    ["series", 3, "events.v1.EventSeries"],
    ["reportingController", 4, "string", "z"],
    ["reportingInstance", 5, "string", "z"],
    ["action", 6, "string", "z"],
    ["reason", 7, "string", "z"],
    ["regarding", 8, "core.v1.ObjectReference"],
    ["related", 9, "core.v1.ObjectReference"],
    ["note", 10, "string", "z"],
    ["type", 11, "string", "z"],
    ["deprecatedSource", 12, "core.v1.EventSource"],
    ["deprecatedFirstTimestamp", 13, "meta.v1.Time"],
    ["deprecatedLastTimestamp", 14, "meta.v1.Time"],
    ["deprecatedCount", 15, "int32", "z"]
  ],
  "events.v1.EventList": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["items", 2, "events.v1.Event", "r"]
  ],
  "events.v1.EventSeries": [
    ["count", 1, "int32"],
    ["lastObservedTime", 2, "meta.v1.MicroTime"]
  ],
  "intstr.IntOrString": [
    ["type", 1, "int64"],
    ["intVal", 2, "int32"],
    ["strVal", 3, "string"]
  ],
  "meta.v1.APIGroup": [
    ["name", 1, "string"],
    ["versions", 2, "meta.v1.GroupVersionForDiscovery", "r"],
    ["preferredVersion", 3, "meta.v1.GroupVersionForDiscovery"],
    ["serverAddressByClientCIDRs", 4, "meta.v1.ServerAddressByClientCIDR", "r"]
  ],
  "meta.v1.APIGroupList": [
    ["groups", 1, "meta.v1.APIGroup", "r"]
  ],
  "meta.v1.APIResource": [
    ["name", 1, "string"],
    ["singularName", 6, "string"],
    ["namespaced", 2, "bool"],
    ["group", 8, "string", "z"],
    ["version", 9, "string", "z"],
    ["kind", 3, "string"],
    ["verbs", 4, "meta.v1.Verbs"],
    ["shortNames", 5, "string", "r"],
    ["categories", 7, "string", "r"],
    ["storageVersionHash", 10, "string", "z"]
  ],
  "meta.v1.APIResourceList": [
    ["groupVersion", 1, "string"],
    ["resources", 2, "meta.v1.APIResource", "r"]
  ],
  "meta.v1.APIVersions": [
    ["versions", 1, "string", "r"],
    ["serverAddressByClientCIDRs", 2, "meta.v1.ServerAddressByClientCIDR", "r"]
  ],
  "meta.v1.Condition": [
    ["type", 1, "string"],
    ["status", 2, "string"],
    ["observedGeneration", 3, "int64", "z"],
    ["lastTransitionTime", 4, "meta.v1.Time"],
    ["reason", 5, "string"],
    ["message", 6, "string"]
  ],
  "meta.v1.DeleteOptions": [
    ["gracePeriodSeconds", 1, "int64"],
    ["preconditions", 2, "meta.v1.Preconditions"],
    ["orphanDependents", 3, "bool"],
    ["propagationPolicy", 4, "string"],
    ["dryRun", 5, "string", "r"],
    ["ignoreStoreReadErrorWithClusterBreakingPotential", 6, "bool"]
  ],
  "meta.v1.FieldSelectorRequirement": [
    ["key", 1, "string"],
    ["operator", 2, "string"],
    ["values", 3, "string", "r"]
  ],
  "meta.v1.FieldsV1": [
    ["Raw", 1, "bytes"]
  ],
  "meta.v1.GroupVersionForDiscovery": [
    ["groupVersion", 1, "string"],
    ["version", 2, "string"]
  ],
  "meta.v1.GroupVersionKind": [
    ["group", 1, "string"],
    ["version", 2, "string"],
    ["kind", 3, "string"]
  ],
  "meta.v1.LabelSelector": [
    ["matchLabels", 1, "string", "m"],
    ["matchExpressions", 2, "meta.v1.LabelSelectorRequirement", "r"]
  ],
  "meta.v1.LabelSelectorRequirement": [
    ["key", 1, "string"],
    ["operator", 2, "string"],
    ["values", 3, "string", "r"]
  ],
  "meta.v1.List": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["items", 2, "runtime.RawExtension", "r"]
  ],
  "meta.v1.ListMeta": [
    ["selfLink", 1, "string", "z"],
    ["resourceVersion", 2, "string", "z"],
    ["continue", 3, "string", "z"],
    ["remainingItemCount", 4, "int64"],
    ["shardInfo", 5, "meta.v1.ShardInfo"]
  ],
  "meta.v1.ManagedFieldsEntry": [
    ["manager", 1, "string", "z"],
    ["operation", 2, "string", "z"],
    ["apiVersion", 3, "string", "z"],
    ["time", 4, "meta.v1.Time"],
    ["fieldsType", 6, "string", "z"],
    ["fieldsV1", 7, "meta.v1.FieldsV1"],
    ["subresource", 8, "string", "z"]
  ],
  "meta.v1.MicroTime": [
    ["seconds", 1, "int64"],
    ["nanos", 2, "int32"]
  ],
  "meta.v1.ObjectMeta": [
    ["name", 1, "string", "z"],
    ["generateName", 2, "string", "z"],
    ["namespace", 3, "string", "z"],
    ["selfLink", 4, "string", "z"],
    ["uid", 5, "string", "z"],
    ["resourceVersion", 6, "string", "z"],
    ["generation", 7, "int64", "z"],
    ["creationTimestamp", 8, "meta.v1.Time"],
    ["deletionTimestamp", 9, "meta.v1.Time"],
    ["deletionGracePeriodSeconds", 10, "int64"],
    ["labels", 11, "string", "m"],
    ["annotations", 12, "string", "m"],
    ["ownerReferences", 13, "meta.v1.OwnerReference", "r"],
    ["finalizers", 14, "string", "r"],
    ["managedFields", 17, "meta.v1.ManagedFieldsEntry", "r"]
  ],
  "meta.v1.OwnerReference": [
    ["apiVersion", 5, "string"],
    ["kind", 1, "string"],
    ["name", 3, "string"],
    ["uid", 4, "string"],
    ["controller", 6, "bool"],
    ["blockOwnerDeletion", 7, "bool"]
  ],
  "meta.v1.Preconditions": [
    ["uid", 1, "string"],
    ["resourceVersion", 2, "string"]
  ],
  "meta.v1.ServerAddressByClientCIDR": [
    ["clientCIDR", 1, "string"],
    ["serverAddress", 2, "string"]
  ],
  "meta.v1.ShardInfo": [
    ["selector", 1, "string"]
  ],
  "meta.v1.Status": [
    ["metadata", 1, "meta.v1.ListMeta"],
    ["status", 2, "string", "z"],
    ["message", 3, "string", "z"],
    ["reason", 4, "string", "z"],
    ["details", 5, "meta.v1.StatusDetails"],
    ["code", 6, "int32", "z"]
  ],
  "meta.v1.StatusCause": [
    ["reason", 1, "string", "z"],
    ["message", 2, "string", "z"],
    ["field", 3, "string", "z"]
  ],
  "meta.v1.StatusDetails": [
    ["name", 1, "string", "z"],
    ["group", 2, "string", "z"],
    ["kind", 3, "string", "z"],
    ["uid", 6, "string", "z"],
    ["causes", 4, "meta.v1.StatusCause", "r"],
    ["retryAfterSeconds", 5, "int32", "z"]
  ],
  "meta.v1.Time": [
    ["seconds", 1, "int64"],
    ["nanos", 2, "int32"]
  ],
  "meta.v1.Verbs": [
    ["items", 1, "string", "r"]
  ],
  "meta.v1.WatchEvent": [
    ["type", 1, "string"],
    ["object", 2, "runtime.RawExtension"]
  ],
  "resource.Quantity": [
    ["string", 1, "string"]
  ],
  "runtime.RawExtension": [
    ["raw", 1, "bytes"]
  ],
  "runtime.TypeMeta": [
    ["apiVersion", 1, "string", "z"],
    ["kind", 2, "string", "z"]
  ],
  "runtime.Unknown": [
    ["typeMeta", 1, "runtime.TypeMeta", "i"],
    ["raw", 2, "bytes"],
    ["contentEncoding", 3, "string"],
    ["contentType", 4, "string"]
  ]
}

/** Messages that are Go named slices: their JSON form is the array of `items`. */
export const listWrappers: ReadonlySet<string> = new Set(["meta.v1.Verbs"])
