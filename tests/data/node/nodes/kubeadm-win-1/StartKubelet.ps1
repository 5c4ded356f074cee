# Starts the kubelet as the kubeadm join of sig-windows-tools' PrepareNode.ps1 lays it out
# (kubernetes-sigs/sig-windows-tools kubeadm/scripts/PrepareNode.ps1, before PR #259).
$FileContent = Get-Content -Path "$env:SYSTEMDRIVE/var/lib/kubelet/kubeadm-flags.env"
$kubeAdmArgs = $FileContent.TrimStart('KUBELET_KUBEADM_ARGS=').Trim('"')
$featuresStr = "WindowsHostProcessContainers=true"

# flannel's CNI configuration, written here as flannel's setup script does
$cniConf = @"
{
  "cniVersion": "0.2.0",
  "name": "cbr0",
  "type": "flannel",
  "delegate": { "type": "win-bridge", "dns": { "Nameservers": [ "10.96.0.10" ] } }
}
"@
Set-Content -Path "C:\etc\cni\net.d\10-flannel.conf" -Value $cniConf

$args = "--cert-dir=$env:SYSTEMDRIVE/var/lib/kubelet/pki",
        "--config=/var/lib/kubelet/config.yaml",
        "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
        "--kubeconfig=/etc/kubernetes/kubelet.conf",
        "--hostname-override=$(hostname)",
        "--pod-infra-container-image=`"mcr.microsoft.com/oss/kubernetes/pause:3.9`"",
        "--enable-debugging-handlers",
        "--cgroups-per-qos=false",
        "--enforce-node-allocatable=`"`"",
        "--network-plugin=cni",
        "--resolv-conf=`"`"",
        "--log-dir=/var/log/kubelet",
        "--logtostderr=false",
        "--image-pull-progress-deadline=20m"

$kubeletCommandLine = "c:\k\kubelet.exe " + ($args -join " ") + " $kubeAdmArgs --feature-gates '$featuresStr'"
Invoke-Expression $kubeletCommandLine
