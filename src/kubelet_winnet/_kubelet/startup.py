"""What the kubelet and kube-proxy accept at start-up: the feature gates of each minor
release, the gates each release locks to their default, and the command-line flags that
were removed. A gate or flag either component no longer has stops it before it does
anything (``unrecognized feature gate: NAME``, ``unknown flag: --NAME``), and so does a
locked gate set to its other value (``cannot set feature gate NAME to false, feature is
locked to true``); the ``node`` command reports them (``_lint/node_checks.py``).

One table serves both components: the kubelet and kube-proxy set their gates on the one
process-wide gate set (``utilfeature.DefaultMutableFeatureGate.SetFromMap``:
``cmd/kubelet/app/server.go``, "failed to set feature gates from initial flags-based
config"; ``cmd/kube-proxy/app/server.go`` ``Options.Complete``), which
``k8s.io/kubernetes/pkg/features`` fills with every gate of the release, those of the
generic API server, client-go and component-base's logging gates included. A gate of
another component's own set alone is still listed (accepting more is the safe side).

The table (:data:`GATE_TABLE`) is pinned from these sources, each row naming its own:

- ``K36``: kubernetes/kubernetes ``test/compatibility_lifecycle/reference/feature_list.md``
  at 006235395113 (a 1.36 tree): every gate then in the code and the first release of it
  (a versioned spec's synthetic "1.0" row does not count: the gate came with the next row).
- ``K32``/``K33``: kubernetes/kubernetes ``test/featuregates_linter/test_data/
  versioned_feature_list.yaml`` at 0021731de589 and ``unversioned_feature_list.yaml`` at
  128e189fcd0e (1.32); ``test/compatibility_lifecycle/reference/versioned_feature_list.yaml``
  at fbba6b47ad98 (1.33).
- ``W``: kubernetes/website ``content/en/docs/reference/command-line-tools-reference/
  feature-gates/NAME.md``: its stages, and ``removed: true`` with the last stage's
  ``toVersion`` as the last release that has the gate.
- ``R``: kubernetes/website ``.../feature-gates-removed.md`` at 03655030d579 (its "To"
  column: the last release in which the gate can still be used).
- ``G``: gardener/gardener ``pkg/utils/validation/features/featuregates.go``, its history
  from f263358bef (Kubernetes 1.26 support) to b1dcad38c0 (1.36 support): each release's
  gates, taken there from kubernetes ``release-1.N`` ``versioned_feature_list.yaml``
  (``RemovedInVersion`` is the first release without the gate). It gives what K36, a
  development tree, lacks: the gates added late in 1.36 and those 1.36 removed.
- ``W37``: the kubernetes.io "Feature gates in Kubernetes v1.37" page (rendered from the
  ``W`` pages): the gates 1.37 added.
- ``C37``/``C38``: kubernetes/kubernetes ``CHANGELOG/CHANGELOG-1.37.md`` at df0a31e010ea
  (v1.37.0-alpha.1) and ``CHANGELOG-1.38.md`` at 0411cc704533 (v1.38.0-alpha.1 and
  alpha.2): gates those releases added, and gates they removed (the row's last release is
  the one before).
- ``S37``: kubernetes/kubernetes ``staging/src/k8s.io/kube-scheduler/pkg/features/
  kube_features.go`` in a 1.37 tree: the versioned specs of the gates it registers on the
  same gate set (first rows, and ``LockToDefault``).

Locks (``gate_locks.py``) come from ``K36``'s Locked column, ``S37`` and the 1.37 and
1.38 notes (``C37a``, ``C38a``).

The lists are complete through 1.36 (``LISTED_THROUGH``). For 1.37 and 1.38 they are not:
the changelogs read stop at 1.37's first and 1.38's second alpha, and the v1.37 page lags
behind removals. So a name in no list is a conditional warning on those releases, not an
error, and a gate no source says was removed is taken to be accepted through 1.38
(``WindowsHostNetwork``'s removal in 1.38 is the profile's ``TIMELINE``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from kubelet_winnet._kubelet.feature_gates import ALL_ALPHA, ALL_BETA, WINDOWS_HOST_NETWORK
from kubelet_winnet._kubelet.timeline import MAX_MINOR, MIN_MINOR, TIMELINE, GateStage

__all__ = [
    "GATES",
    "GATE_SOURCES",
    "LISTED_THROUGH",
    "REMOVED_FLAGS",
    "Component",
    "GateSpan",
    "RemovedFlag",
    "gate_minors",
    "removed_flag",
]

Component = Literal["kubelet", "kube-proxy"]

#: The newest release whose gate list is complete; 1.37 and 1.38 may have gates none read.
LISTED_THROUGH = 36

GATE_SOURCES: Mapping[str, str] = {
    "K36": "kubernetes/kubernetes test/compatibility_lifecycle/reference/feature_list.md "
           "(006235395113, 1.36)",
    "K32": "kubernetes/kubernetes test/featuregates_linter/test_data/"
           "versioned_feature_list.yaml (0021731de589, 1.32)",
    "K33": "kubernetes/kubernetes test/compatibility_lifecycle/reference/"
           "versioned_feature_list.yaml (fbba6b47ad98, 1.33)",
    "W": "kubernetes/website content/en/docs/reference/command-line-tools-reference/"
         "feature-gates/NAME.md",
    "R": "kubernetes/website content/en/docs/reference/command-line-tools-reference/"
         "feature-gates-removed.md (03655030d579)",
    "G": "gardener/gardener pkg/utils/validation/features/featuregates.go "
         "(f263358bef..b1dcad38c0, from kubernetes release-1.26..1.36 "
         "versioned_feature_list.yaml)",
    "W37": "kubernetes.io Feature Gates page, \"Feature gates in Kubernetes v1.37\" "
           "(kubernetes/website feature-gates/NAME.md)",
    "C37": "kubernetes/kubernetes CHANGELOG/CHANGELOG-1.37.md (df0a31e010ea, v1.37.0-alpha.1)",
    "C38": "kubernetes/kubernetes CHANGELOG/CHANGELOG-1.38.md (0411cc704533, v1.38.0-alpha.2)",
    "C37a": "kubernetes/kubernetes CHANGELOG/CHANGELOG-1.37.md (04666cc668c5, "
            "v1.37.0-alpha.1: \"The deprecated DeclarativeValidationTakeover feature gate is "
            "now locked to its default value\", PR #139212)",
    "C38a": "kubernetes/kubernetes CHANGELOG/CHANGELOG-1.38.md (5e9fea7dbb7d, "
            "v1.38.0-alpha.1, Feature: DRADeviceTaints and DRADeviceTaintRules \"are now "
            "locked to true (GA) in 1.38\", PR #140256; \"The EnvFiles feature gate is now "
            "locked to enabled\", PR #139115; KEP-4858's stricter IP/CIDR rules \"are now "
            "always in effect\", PR #141979)",
    "S37": "kubernetes/kubernetes staging/src/k8s.io/kube-scheduler/pkg/features/"
           "kube_features.go (a 1.37 tree: defaultVersionedKubernetesFeatureGates, the "
           "versioned specs with LockToDefault)",
}

# NAME  FIRST  LAST  SOURCE. FIRST: the first minor with the gate; LAST: the last minor
# with it, "+" when no source read says it was removed (taken as accepted through 1.38).
# SOURCE: the one that decides the row's refused releases (for a removed gate, the removal).
GATE_TABLE = """
AdmissionWebhookMatchConditions                      27 32 W
AdvancedAuditing                                      7 27 W
AggregatedDiscoveryEndpoint                          26 32 W
AggregatedDiscoveryRemoveBetaType                    33 37 C38
AllowDNSOnlyNodeCSR                                  31  + K36
AllowInsecureBackendProxy                            17 25 R
AllowInsecureKubeletCertificateSigningRequests       31  + K36
AllowOverwriteTerminationGracePeriodSeconds          32  + K36
AllowParsingUserUIDFromCertAuth                      33  + K36
AllowServiceExternalIPs                              36  + G
AllowServiceLBStatusOnNonLB                          29 34 W
AllowUnsafeMalformedObjectDeletion                   32  + K36
AnonymousAuthConfigurableEndpoints                   31  + K36
AnyVolumeDataSource                                  18 36 C37
APIListChunking                                       8 32 W
APIPriorityAndFairness                               18 30 W
APIResponseCompression                                8  + K36
APISelfSubjectReview                                 26 29 W
APIServerIdentity                                    20  + K36
APIServerTracing                                     22 36 C37
APIServerWebhookAuthenticationToken                  37  + W37
APIServingWithRoutine                                30  + K36
AppArmor                                              4 32 W
AppArmorFields                                       30 32 W
AtomicFIFO                                           36  + K36
AtomicWriteVolumeUserFields                          37  + W37
AuthorizeNodeWithSelectors                           31  + K36
AuthorizePodWebsocketUpgradeCreatePermission         35  + K36
AuthorizeWithSelectors                               31  + K36
BtreeWatchCache                                      32 36 C37
CBORServingAndStorage                                32  + K36
CertificateSigningRequestMLDSA                       38  + C38
CgroupNamespacesSupport                              38  + W
ChangeContainerStatusOnKubeletRestart                35  + K36
ClearingNominatedNodeNameAfterBinding                34  + K36
ClientsAllowCBOR                                     32  + K36
ClientsPreferCBOR                                    32  + K36
CloudControllerManagerWatchBasedRoutesReconciliation 35  + K36
CloudControllerManagerWebhook                        27  + K36
CloudNodeAdditionalLabelsReconciliation              38  + W
CloudDualStackNodeIPs                                27 31 W
ClusterTrustBundle                                   27  + K36
ClusterTrustBundleProjection                         29  + K36
ComponentFlagz                                       32  + K36
ComponentSLIs                                        26 34 W
ComponentStatusz                                     32  + K36
CompositePodGroup                                    37  + W37
ConcurrentWatchObjectDecode                          31  + K36
ConditionalAuthorization                             37  + W
ConfigurableFSGroupPolicy                            18 25 R
ConsistentHTTPGetHandlers                            25 30 W
ConsistentListFromCache                              28 36 C37
ConsistentListFromCacheSkipTimeoutFallback           37  + C37
ConstrainedImpersonation                             35  + K36
ContainerCheckpoint                                  25  + K36
ContainerRestartRules                                34  + K36
ContainerStopSignals                                 33  + K36
ContainerUlimits                                     38  + W
ContextualLogging                                    24  + W
ControllerManagerLeaderMigration                     21 26 R
ControllerManagerReleaseLeaderElectionLockOnExit     36  + G
CoordinatedLeaderElection                            31  + K36
CPUManager                                            8 32 W
CPUManagerPolicyAlphaOptions                         23  + K36
CPUManagerPolicyBetaOptions                          23  + K36
CPUManagerPolicyOptions                              22  + K36
CRDObservedGenerationTracking                        35  + K36
CRDValidationRatcheting                              28 37 C38
CRIListStreaming                                     36  + G
CronJobsScheduledAnnotation                          28 34 G
CronJobTimeZone                                      24 28 W
CrossNamespaceVolumeDataSource                       26  + K36
CSIControllerGetNodeInfo                             38  + W
CSIGlobalMountReconstruction                         38  + W
CSIInlineVolume                                      15 26 R
CSIMigration                                         14 26 R
CSIMigrationAWS                                      14 26 R
CSIMigrationAzureDisk                                15 26 R
CSIMigrationAzureFile                                15 29 W
CSIMigrationGCE                                      14 27 W
CSIMigrationOpenStack                                14 25 R
CSIMigrationPortworx                                 23 35 G
CSIMigrationRBD                                      23 30 W
CSIMigrationvSphere                                  18 28 W
CSINodeExpandSecret                                  25 30 W
CSIServiceAccountToken                               20 24 R
CSIServiceAccountTokenSecrets                        35  + K36
CSIStorageCapacity                                   19 27 W
CSIVolumeFSGroupPolicy                               19 25 R
CSIVolumeHealth                                      21  + K36
CSRDuration                                          22 25 R
CustomCPUCFSQuotaPeriod                              12  + K36
CustomResourceFieldSelectors                         30 37 C38
CustomResourceValidationExpressions                  23 30 W
DaemonSetUpdateSurge                                 21 26 R
DeclarativeValidation                                33  + K36
DeclarativeValidationBeta                            36  + G
DeclarativeValidationTakeover                        33  + K36
DefaultHostNetworkHostPortsInPodTemplates            28 30 W
DefaultPodSysctls                                    37  + W37
DefaultPodTopologySpread                             19 25 R
DelegateFSGroupToCSIDriver                           22 27 W
DeploymentPodReplacementPolicy                       32  + K33
DeploymentReplicaSetTerminatingReplicas              33  + K36
DetectCacheInconsistency                             34  + K36
DevicePluginCDIDevices                               28 33 W
DevicePlugins                                         8 27 W
DisableAcceleratorUsageMetrics                       19 27 W
DisableAllocatorDualWrite                            31  + K36
DisableCloudProviders                                22 32 W
DisableCPUQuotaWithExclusiveCPUs                     33  + K36
DisableKubeletCloudCredentialProviders               23 32 W
DisableNodeKubeProxyVersion                          29  + K36
DownwardAPIAssignedResources                         37  + W
DownwardAPIHugePages                                 20 28 W
DRAAdminAccess                                       32  + K36
DRAConsumableCapacity                                34  + K36
DRAControlPlaneController                            26 31 W
DRADerivedAttributes                                 37  + W37
DRADeviceBindingConditions                           34  + K36
DRADeviceCompatibilityGroups                         37  + W37
DRADeviceTaintRules                                  35  + K36
DRADeviceTaints                                      33  + K36
DRAExtendedResource                                  34  + K36
DRAFractionalCapacityRange                           37  + S37
DRAListTypeAttributes                                36  + G
DRANodeAllocatableResources                          36  + G
DRAOptionalNodeOperations                            37  + W37
DRAPartitionableDevices                              33  + K36
DRAPartitionableDevicesType                          37  + W37
DRAPrioritizedList                                   33  + K36
DRAResourceClaimDeviceStatus                         32  + K36
DRAResourceClaimGranularStatusAuthorization          36  + G
DRAResourcePoolStatus                                36  + G
DRASchedulerFilterTimeout                            34  + K36
DRASharedConsumableCapacity                          37  + W
DRAWorkloadResourceClaims                            36  + G
DryRun                                               12 27 W
DynamicKubeletConfig                                  4 25 R
DynamicResourceAllocation                            26 37 C38
EfficientWatchResumption                             20 32 W
ElasticIndexedJob                                    27 33 G
EmptyDirVolumeMode                                   37  + W37
EndpointSlice                                        16 24 R
EndpointSliceNodeName                                20 24 R
EndpointSliceProxying                                18 24 R
EndpointSliceTerminatingCondition                    20 27 W
EnvFiles                                             34  + K36
EphemeralContainers                                  16 26 R
EtcdRangeStream                                      37  + W37
EventedPLEG                                          26  + K36
ExcludeAdmissionWebhookVirtualResources              37  + W37
ExecProbeTimeout                                     20  + K36
ExpandCSIVolumes                                     14 26 R
ExpandedDNSConfig                                    22 29 W
ExpandInUsePersistentVolumes                         11 26 R
ExpandPersistentVolumes                               8 26 R
ExperimentalHostUserNamespaceDefaulting               5 29 W
ExtendWebSocketsToKubelet                            36  + G
ExternalNodeLivenessDetection                        38  + W
ExternalServiceAccountTokenSigner                    32  + K36
GangScheduling                                       35  + K36
GenericEphemeralVolume                               19 24 R
GenericWorkload                                      35  + K36
GitRepoVolumeDriver                                  33  + K36
GracefulNodeShutdown                                 20  + K36
GracefulNodeShutdownBasedOnPodPriority               23  + K36
GRPCContainerProbe                                   23 28 W
GRPCContainerProbeTLS                                37  + W37
H2CContainerProbe                                    37  + W37
HonorPVReclaimPolicy                                 23 35 G
HostnameOverride                                     34  + K36
HPAConfigurableTolerance                             33  + K36
HPAContainerMetrics                                  20 31 W
HPAScaleToZero                                       16  + K36
HugepageAwareEviction                                37  + W37
HugePageStorageMediumSize                            18 24 R
HyperVContainer                                      10 20 R
IdentifyPodOS                                        23 26 R
ImageMaximumGCAge                                    29  + K36
ImageVolume                                          31  + K36
ImageVolumeWithDigest                                35  + K36
ImmutableEphemeralVolumes                            18 24 R
IndexedJob                                           21 25 R
InformerResourceVersion                              30  + K36
IngressClassNamespacedParams                         21 24 R
InOrderInformers                                     33  + K36
InOrderInformersBatchProcess                         35  + K36
InPlacePodLevelResourcesVerticalScaling              35  + K36
InPlacePodVerticalScaling                            27  + K36
InPlacePodVerticalScalingAllocatedStatus             32 35 G
InPlacePodVerticalScalingExclusiveCPUs               32  + K36
InPlacePodVerticalScalingExclusiveMemory             34  + K36
InPlacePodVerticalScalingInitContainers              36  + G
InPlacePodVerticalScalingMemoryBackedVolumes         37  + W37
InPlacePodVerticalScalingSchedulerPreemption         37  + W37
InterPodAffinityHostnameFastPath                     37  + S37
InTreePluginAWSUnregister                            21 30 W
InTreePluginAzureDiskUnregister                      21 30 W
InTreePluginAzureFileUnregister                      21 30 W
InTreePluginGCEUnregister                            21 30 W
InTreePluginOpenStackUnregister                      21 30 W
InTreePluginPortworxUnregister                       23 35 W
InTreePluginRBDUnregister                            23 30 W
InTreePluginvSphereUnregister                        21 30 W
IPTablesOwnershipCleanup                             25 29 W
IPv6DualStack                                        15 24 R
JobBackoffLimitPerIndex                              28  + K36
JobManagedBy                                         30  + K36
JobMutableNodeSchedulingDirectives                   23 28 W
JobPodFailurePolicy                                  25 32 W
JobPodReplacementPolicy                              28  + K36
JobReadyPods                                         23 30 W
JobSuccessPolicy                                     30  + K36
JobTrackingWithFinalizers                            22 28 W
KMSv1                                                28  + K36
KMSv2                                                25 31 W
KMSv2KDF                                             28 31 W
KubeletCgroupDriverFromCRI                           28  + K36
KubeletCrashLoopBackOffMax                           32  + K36
KubeletCredentialProviders                           20 27 G
KubeletEnsureSecretPulledImages                      33  + K36
KubeletFineGrainedAuthz                              32  + K36
KubeletInUserNamespace                               22  + K36
KubeletPodResources                                  13 29 W
KubeletPodResourcesDynamicResources                  27  + K36
KubeletPodResourcesGet                               27  + K36
KubeletPodResourcesGetAllocatable                    21 29 W
KubeletPodResourcesListUseActivePods                 34  + K36
KubeletPSI                                           33  + K36
KubeletRegistrationGetOnExistsOnly                   32  + K36
KubeletSeparateDiskGC                                29  + K36
KubeletServiceAccountTokenForCredentialProviders     33  + K36
KubeletTracing                                       25 37 C38
KubeProxyDrainingTerminatingNodes                    28 32 W
KubeProxyIPVS                                        37  + W37
KubeProxyNFTablesLocalhostNodePorts                  37  + W37
LeaderElectionRecovery                               38  + W
LegacyServiceAccountTokenCleanUp                     28 31 W
LegacyServiceAccountTokenNoAutoGeneration            24 28 W
LegacyServiceAccountTokenTracking                    26 29 W
LegacySidecarContainers                              33 33 G
ListFromCacheSnapshot                                33  + K36
LoadBalancerIPMode                                   29 34 W
LocalStorageCapacityIsolation                         7 26 R
LocalStorageCapacityIsolationFSQuotaMonitoring       15  + K36
LogarithmicScaleDown                                 21  + K36
LoggingAlphaOptions                                  24  + W
LoggingBetaOptions                                   24  + W
ManagedFieldsOptOut                                  38  + C38
ManifestBasedAdmissionControlConfig                  36  + G
MatchLabelKeysInPodAffinity                          29 37 C38
MatchLabelKeysInPodTopologySpread                    25  + K36
MatchLabelKeysInPodTopologySpreadSelectorMerge       34  + K36
MaxUnavailableStatefulSet                            24  + K36
MemoryManager                                        21 35 G
MemoryManagerDriftTolerance                          38  + W
MemoryQoS                                            22  + K36
MinDomainsInPodTopologySpread                        24 31 W
MinimizeIPTablesRestore                              26 29 W
MixedProtocolLBService                               20 27 W
MultiCIDRRangeAllocator                              25 28 W
MultiCIDRServiceAllocator                            27  + K36
MutableContainerProbes                               38  + W
MutableCSINodeAllocatableCount                       33  + K36
MutablePodResourcesForSuspendedJobs                  35  + K36
MutablePVNodeAffinity                                35  + K36
MutableSchedulingDirectivesForSuspendedJobs          35  + K36
MutatingAdmissionPolicy                              30  + K36
NativeHistograms                                     36  + G
NetworkPolicyEndPort                                 21 26 R
NetworkPolicyStatus                                  24 27 W
NewVolumeManagerReconstruction                       25 31 W
NFTablesProxyMode                                    29  + K36
NodeDeclaredFeatures                                 35  + K36
NodeInclusionPolicyInPodTopologySpread               25  + K36
NodeLifecycleConditions                              37  + W37
NodeLogQuery                                         27  + K36
NodeOutOfServiceVolumeDetach                         24 31 W
NodeSwap                                             22  + K36
NominatedNodeNameForExpectation                      34  + K36
NonPreemptingPriority                                15 25 R
OpenAPIEnums                                         23  + K36
OpenAPIV3                                            23 28 W
OpportunisticBatching                                35  + K36
OrderedNamespaceDeletion                             30 36 C37
PDBUnhealthyPodEvictionPolicy                        26 32 W
PersistentVolumeClaimUnusedSinceTime                 36  + G
PersistentVolumeLastPhaseTransitionTime              28 32 W
PLEGOnDemandRelist                                   36  + G
PodAffinityNamespaceSelector                         21 25 R
PodAndContainerStatsFromCRI                          23  + K36
PodCertificateRequest                                34  + K36
PodDefaultNetwork                                    38  + W
PodDeletionCost                                      21  + K36
PodDisruptionBudget                                   3 25 R
PodDisruptionConditions                              25 33 W
PodGroupPreemptionPolicy                             37  + W37
PodHasNetworkCondition                               25 27 W
PodHostIPs                                           28 31 W
PodImplicitRootWarnings                              38  + W
PodIndexLabel                                        28 34 G
PodLevelResourceManagers                             36  + G
PodLevelResources                                    32  + K36
PodLifecycleSleepAction                              29  + K36
PodLifecycleSleepActionAllowZero                     32  + K36
PodLogsQuerySplitStreams                             32  + K36
PodObservedGenerationTracking                        33  + K36
PodOverhead                                          16 25 R
PodReadyToStartContainersCondition                   28  + K36
PodsAPI                                              36  + G
PodSchedulingReadiness                               26 37 C38
PodSecurity                                          22 27 W
PodTopologyLabelsAdmission                           33  + K36
PortForwardWebsockets                                30  + K36
PreferAlignCpusByUncoreCache                         32  + G
PreferNominatedNode                                  21 25 R
PreferSameTrafficDistribution                        33  + K36
PreventStaticPodAPIReferences                        34  + K36
ProbeHostPodSecurityStandards                        34 34 G
ProbeTerminationGracePeriod                          21 28 W
ProcMountType                                        12  + K36
ProxyTerminatingEndpoints                            22 29 W
QOSReserved                                          11  + K36
ReadWriteOncePod                                     22 30 W
RecoverVolumeExpansionFailure                        23  + K36
RecursiveReadOnlyMounts                              30  + K36
ReduceDefaultCrashLoopBackOffDecay                   33  + K36
RelaxedDNSSearchValidation                           32 36 C37
RelaxedEnvironmentVariableValidation                 30  + K36
RelaxedServiceNameValidation                         34  + K36
ReloadKubeletClientCAFile                            36  + G
ReloadKubeletServerCertificateFile                   31  + K36
RemainingItemCount                                   15 32 W
RemoteRequestHeaderUID                               32  + K36
RemoveSelfLink                                       16 29 W
ResilientWatchCacheInitialization                    31 36 C37
ResourceHealthStatus                                 31  + K36
ResourceHealthStatusMessage                          36  + K36
RestartAllContainersOnContainerExits                 35  + K36
RetroactiveDefaultStorageClass                       25 28 W
RetryGenerateName                                    30 36 C37
RotateKubeletClientCertificate                        8 21 R
RotateKubeletServerCertificate                        7  + K36
RuntimeClass                                         12 24 R
RuntimeClassInImageCriApi                            29  + K36
SchedulerAsyncAPICalls                               34  + K36
SchedulerAsyncPreemption                             32  + K36
SchedulerPopFromBackoffQ                             33  + K36
SchedulerPreQueueingHints                            37  + S37
SchedulerQueueingHints                               28  + K36
SeccompDefault                                       22 28 W
SecurityContextDeny                                  27 29 W
SecurityProfileOCI                                   38  + W
SelectorIndex                                        18 25 R
SELinuxChangePolicy                                  32  + K36
SELinuxMount                                         30  + K36
SELinuxMountReadWriteOncePod                         25  + K36
SeparateCacheWatchRPC                                28  + K36
SeparateTaintEvictionController                      29 37 C38
ServerSideApply                                      14 31 W
ServerSideFieldValidation                            23 31 W
ServiceAccountNodeAudienceRestriction                32  + K36
ServiceAccountTokenJTI                               29  + K36
ServiceAccountTokenNodeBinding                       29  + K36
ServiceAccountTokenNodeBindingValidation             29  + K36
ServiceAccountTokenPodNodeInfo                       29 37 C38
ServiceCIDRStatusFieldWiping                         36  + G
ServiceInternalTrafficPolicy                         21 27 W
ServiceIPStaticSubrange                              24 27 W
ServiceLBNodePortControl                             20 25 R
ServiceLoadBalancerClass                             21 25 R
ServiceNodePortStaticSubrange                        27 30 W
ServiceTopology                                      17 22 R
ServiceTrafficDistribution                           30 35 G
SetHostnameAsFQDN                                    19 24 R
ShardedListAndWatch                                  36  + G
SidecarContainers                                    28 36 C37
SizeBasedListCostEstimate                            34  + K36
SizeMemoryBackedVolumes                              20 34 W
SkipReadOnlyValidationGCE                            28 30 W
StableLoadBalancerNodeSet                            27 31 W
StaleControllerConsistencyDaemonSet                  36  + G
StaleControllerConsistencyJob                        36  + G
StaleControllerConsistencyReplicaSet                 36  + G
StaleControllerConsistencyStatefulSet                36  + G
StatefulSetAutoDeletePVC                             23 34 G
StatefulSetMinReadySeconds                           22 26 R
StatefulSetRecreateStrategy                          37  + W37
StatefulSetSemanticRevisionComparison                26  + K36
StatefulSetStartOrdinal                              26 33 G
StorageCapacityScoring                               33  + K36
StorageNamespaceIndex                                30  + K36
StorageObjectInUseProtection                         10 24 R
StorageVersionAPI                                    20  + K36
StorageVersionHash                                   14  + K36
StorageVersionMigrator                               30  + K36
StreamingCollectionEncodingToJSON                    33 36 C37
StreamingCollectionEncodingToProtobuf                33 36 C37
StreamingProxyRedirects                               5 24 R
StrictCostEnforcementForVAP                          30 34 G
StrictCostEnforcementForWebhooks                     30 34 G
StrictIPCIDRValidation                               33  + K36
StructuredAuthenticationConfiguration                29  + K36
StructuredAuthenticationConfigurationEgressSelector  34  + K36
StructuredAuthenticationConfigurationJWKSMetrics     35  + K36
StructuredAuthorizationConfiguration                 29 35 G
SupplementalGroupsPolicy                             31  + K36
SupportIPVSProxyMode                                  8 20 R
SuspendJob                                           21 25 R
SystemdWatchdog                                      32  + K36
TaintTolerationComparisonOperators                   35  + K36
TokenRequestServiceAccountUIDValidation              34  + K36
TopologyAwareHints                                   21 35 G
TopologyAwareWorkloadScheduling                      36  + G
TopologyManager                                      16 28 W
TopologyManagerPolicyAlphaOptions                    26  + K36
TopologyManagerPolicyBetaOptions                     26  + K36
TopologyManagerPolicyOptions                         26  + K36
TranslateStreamCloseWebsocketRequests                29  + K36
TTLAfterFinished                                     12 24 R
UnauthenticatedHTTP2DOSMitigation                    25  + K36
UnknownVersionInteroperabilityProxy                  28  + K36
UnlockWhileProcessingFIFO                            36  + K36
UserNamespacesHostNetworkSupport                     35  + K36
UserNamespacesPodSecurityStandards                   29 34 W
UserNamespacesStatelessPodsSupport                   25 27 W
UserNamespacesSupport                                28  + G
ValidateProxyRedirects                               12 24 R
ValidatingAdmissionPolicy                            26 31 W
VolumeAttributesClass                                29  + K36
VolumeBindMountOptions                               37  + W37
VolumeCapacityPriority                               21 32 W
VolumeLimitScaling                                   35  + K36
VolumeSubpath                                        10 24 R
VolumeSubpathEnvExpansion                            14 24 R
WarningHeaders                                       19 24 R
WatchBookmark                                        15 32 W
WatchCacheInitializationPostStartHook                31  + K36
WatchFromStorageWithoutResourceVersion               27 35 G
WatchList                                            27  + K36
WatchListClient                                      30  + K36
WindowsCPUAndMemoryAffinity                          32  + K36
WindowsEndpointSliceProxying                         19 24 R
WindowsGMSA                                          14 20 R
WindowsGracefulNodeShutdown                          32  + K36
WindowsHostNetwork                                   26  + K36
WindowsHostProcessContainers                         22 27 W
WindowsRunAsUserName                                 16 20 R
WinDSR                                               14  + K36
WinOverlay                                           14  + K36
WorkloadAwarePreemption                              36  + G
WorkloadControlledSwap                               38  + W
WorkloadWithJob                                      36  + G
ZeroLimitedNominalConcurrencyShares                  29 31 W
"""


@dataclass(frozen=True)
class GateSpan:
    """The minors (``1.first`` to ``1.last``) whose kubelet and kube-proxy accept a gate."""

    name: str
    first: int
    last: int | None  # None: still in the newest list read, taken as accepted since
    source: str  # a key of GATE_SOURCES

    def accepts(self, minor: int) -> bool:
        return self.first <= minor and (self.last is None or minor <= self.last)


def _spans() -> dict[str, GateSpan]:
    spans: dict[str, GateSpan] = {}
    for row in GATE_TABLE.split("\n"):
        if not row:
            continue
        name, first, last, source = row.split()
        if name in spans or source not in GATE_SOURCES:  # pragma: no cover - a table typo
            raise RuntimeError(f"GATE_TABLE row {row!r}")
        spans[name] = GateSpan(name, int(first), None if last == "+" else int(last), source)
    # One home for WindowsHostNetwork: the profile's timeline says when it went.
    kept = max(r.minor for r in TIMELINE if r.stage is not GateStage.REMOVED)
    spans[WINDOWS_HOST_NETWORK] = GateSpan(
        WINDOWS_HOST_NETWORK, spans[WINDOWS_HOST_NETWORK].first,
        None if kept == MAX_MINOR else kept, "K36")
    return spans


GATES: Mapping[str, GateSpan] = _spans()

_ALWAYS = frozenset({ALL_ALPHA, ALL_BETA})  # featuregate's own names, in every release


def gate_minors(name: str) -> tuple[int, ...] | None:
    """The supported minors whose kubelet and kube-proxy accept gate ``name``; None when
    the name is in no list read (no release up to LISTED_THROUGH has it)."""
    if name in _ALWAYS:
        return tuple(range(MIN_MINOR, MAX_MINOR + 1))
    span = GATES.get(name)
    if span is None:
        return None
    return tuple(m for m in range(MIN_MINOR, MAX_MINOR + 1) if span.accepts(m))


@dataclass(frozen=True)
class RemovedFlag:
    """A command-line flag the component refuses from ``1.removed_in`` on."""

    name: str  # without the leading dashes
    components: frozenset[Component]
    removed_in: int
    replacement: str  # what to do instead, one clause
    source: str


_KLOG = (
    "kubernetes/website content/en/docs/concepts/cluster-administration/system-logs.md "
    "(deprecated in 1.23, removed in 1.26: KEP-2845, kubernetes PR #112120)")
_KLOG_INSTEAD = "redirect the output instead, with kube-log-runner on Windows"
_DOCKERSHIM = "CHANGELOG-1.24.md (kubernetes PR #106907: removed with dockershim)"
_DOCKERSHIM_INSTEAD = "containerd reads its CNI and image settings from its own config.toml"
_BOTH: frozenset[Component] = frozenset({"kubelet", "kube-proxy"})
_KUBELET: frozenset[Component] = frozenset({"kubelet"})

REMOVED_FLAGS: Mapping[str, RemovedFlag] = {flag.name: flag for flag in (
    *(RemovedFlag(name, _BOTH, 26, _KLOG_INSTEAD, _KLOG) for name in (
        "add-dir-header", "alsologtostderr", "log-backtrace-at", "log-dir", "log-file",
        "log-file-max-size", "logtostderr", "one-output", "skip-headers",
        "skip-log-headers", "stderrthreshold")),
    *(RemovedFlag(name, _KUBELET, 24, _DOCKERSHIM_INSTEAD, _DOCKERSHIM) for name in (
        "experimental-dockershim-root-directory", "docker-endpoint",
        "image-pull-progress-deadline", "network-plugin", "cni-conf-dir", "cni-bin-dir",
        "cni-cache-dir", "network-plugin-mtu")),
    RemovedFlag("container-runtime", _KUBELET, 27,
                "the runtime is always remote: keep --container-runtime-endpoint",
                "CHANGELOG-1.27.md (kubernetes PR #114017)"),
    RemovedFlag("pod-infra-container-image", _KUBELET, 35,
                "the pause image is the runtime's setting: containerd's sandbox image",
                "CHANGELOG-1.35.md, v1.35.0 Urgent Upgrade Notes (kubernetes PR #133779: "
                "\"users must manually remove this flag ... to prevent startup failures\")"),
)}


def removed_flag(name: str, component: Component) -> RemovedFlag | None:
    """The removal of flag ``--name`` from ``component``, or None when it was not removed."""
    flag = REMOVED_FLAGS.get(name)
    return flag if flag is not None and component in flag.components else None
