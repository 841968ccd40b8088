"""Pod identity (namespace, pod, container) from a kubelet log path.

Source: kubelet's log layout (``pkg/kubelet/kuberuntime/logs``, ``BuildPodLogsDirectory``
and ``BuildContainerLogsDirectory``): ``/var/log/pods/<namespace>_<pod>_<uid>/<container>/
<restart>.log``, and the CRI symlinks ``/var/log/containers/<pod>_<namespace>_<container>-
<container id>.log``. Namespaces and pod names are DNS names, so they hold no ``_``.
"""
from __future__ import annotations

from pathlib import PurePosixPath
from typing import Optional

from .. import rxcache
from ..lazydc import dataclass  # processed on first use (start-up, issue 18)

_POD_DIR = rxcache.compile(r"(?P<ns>[a-z0-9][a-z0-9-]{0,62})_(?P<pod>[a-z0-9][a-z0-9.-]{0,252})_(?P<uid>[0-9a-fA-F-]{1,64})")
_LOG_NAME = rxcache.compile(r"\d{1,9}\.log(?:\.\d{8}-\d{6}(?:\.gz)?)?")
_CONTAINERS = rxcache.compile(
    r"(?P<pod>[a-z0-9][a-z0-9.-]{0,252})_(?P<ns>[a-z0-9][a-z0-9-]{0,62})_(?P<container>[a-z0-9][a-z0-9-]{0,62})-(?P<id>[0-9a-f]{64})\.log")


@dataclass(frozen=True)
class PodLabels:
    """Where a followed log comes from; any field may be unknown (None)."""

    namespace: Optional[str] = None
    pod: Optional[str] = None
    container: Optional[str] = None
    #: kubelet's restart count of the container (the ``N`` of ``N.log``); not a label
    restart: Optional[int] = None


def labels_from_path(path: str) -> PodLabels:
    """Namespace, pod and container named by a kubelet log path; all None for any other path.

    >>> labels_from_path("/var/log/pods/llm_vllm-0_0f1e2d3c-aaaa-bbbb-cccc-0123456789ab/vllm/0.log")
    PodLabels(namespace='llm', pod='vllm-0', container='vllm', restart=0)
    """
    p = PurePosixPath(path)
    if len(p.parts) >= 3 and _LOG_NAME.fullmatch(p.name):
        m = _POD_DIR.fullmatch(p.parts[-3])
        if m:
            return PodLabels(m.group("ns"), m.group("pod"), p.parts[-2], int(p.name.split(".", 1)[0]))
    m = _CONTAINERS.fullmatch(p.name)
    if m:
        return PodLabels(m.group("ns"), m.group("pod"), m.group("container"))
    return PodLabels()
