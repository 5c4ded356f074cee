module kubelet-winnet/go-oracle

go 1.22
