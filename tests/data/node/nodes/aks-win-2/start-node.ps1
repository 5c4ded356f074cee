# One script starting both components, as an AKS-style node bootstrap lays them out
# (Azure/AgentBaker parts/windows: kubeletstart.ps1 and kubeproxystart.ps1, in one file).
$global:KubeDir = "c:\k"
$global:KubeletNodeLabels = "kubernetes.azure.com/role=agent,kubernetes.io/os=windows"

$KubeletArgList = @("--node-labels=$global:KubeletNodeLabels", "--container-runtime=remote",
    "--container-runtime-endpoint=npipe://./pipe/containerd-containerd",
    "--feature-gates=RotateKubeletServerCertificate=true,WindowsHostProcessContainers=true",
    "--v=2")
$kubeletArgListStr = ($KubeletArgList -join " ")
Invoke-Expression "$global:KubeDir\kubelet.exe $kubeletArgListStr"

$KubeproxyArgList = @("--v=3", "--proxy-mode=kernelspace",
    "--hostname-override=$env:computername", "--kubeconfig=$global:KubeDir\config",
    "--enable-dsr=true", "--feature-gates=WinDSR=true,IPv6DualStack=true",
    "--logtostderr=true")
& "$global:KubeDir\kube-proxy.exe" $KubeproxyArgList
