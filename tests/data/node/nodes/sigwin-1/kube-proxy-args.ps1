# The kube-proxy arguments of kubernetes-sigs/sig-windows-tools
# hostprocess/flannel/kube-proxy/start.ps1 (a PowerShell array), values filled in.
$arguments = "--v=6",
        "--hostname-override=sigwin-1",
        "--feature-gates=WinOverlay=true",
        "--proxy-mode=kernelspace",
        "--source-vip=10.244.3.2",
        "--kubeconfig=C:/hpc/mounts/var/lib/kube-proxy/kubeconfig.conf"
