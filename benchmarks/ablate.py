"""Each cache / fast path off vs on, on the benchmark rows it is meant for (paired rounds)."""
import sys, time, gc, statistics
sys.path.insert(0, "benchmarks")
import run
import kubelet_winnet as kw
from kubelet_winnet import _pod, _profile, _translate, _messages, _rules
from kubelet_winnet._rules import SandboxDecision, WindowsOptions, ContainerFacts, PodFacts

pods = [p.manifest for p in run.load_corpus(run.Path("/work/shared/corpus"))]
ok, refused = [], []
for m in pods:
    try: kw.windows_sandbox_config(m); ok.append(m)
    except kw.SandboxConfigError: refused.append(m)
v1 = []
for m in ok:
    try: v1.append(run.to_v1pod(m))
    except Exception: pass

class NoCache(dict):
    def get(self, k, d=None): return d
    def __getitem__(self, k): raise KeyError(k)
    def __setitem__(self, k, v): pass
    def __len__(self): return 0

class Rebuild(dict):
    def __getitem__(self, k):
        d = dict.__getitem__(self, k)
        return SandboxDecision(d.network, d.host_process, d.run_as_username, d.credential_spec, d.error, d.error_rule, steps=d.steps)

def sc(x): return kw.windows_sandbox_config(x)
def _try(x):
    try: kw.windows_sandbox_config(x)
    except kw.SandboxConfigError: pass
def general(x):
    t, at = _pod.pod_template(x); return _pod.pod_facts(t.get("spec"), at + "spec.")

def t(f, items, n=3):
    gc.disable(); s = time.perf_counter()
    for _ in range(n):
        for x in items: f(x)
    e = (time.perf_counter() - s) / n / len(items); gc.enable()
    return e

def ablate(label, items, on, off, fn=sc, rounds=40):
    ratios = []
    for _ in range(rounds):
        on(); a = t(fn, items)
        off(); b = t(fn, items)
        on(); ratios.append(b / a)
    print(f"{label}: off/on = {statistics.median(ratios):.3f}")

def patch(obj, name, value):
    return lambda: setattr(obj, name, value)

P = _profile._PROFILES
fw, fc, fp, fd = _pod.make_windows_options, _pod.make_container_facts, _pod.make_pod_facts, _rules.make_sandbox_decision
def fast_on():
    _pod.make_windows_options, _pod.make_container_facts, _pod.make_pod_facts, _rules.make_sandbox_decision = fw, fc, fp, fd
def fast_off():
    _pod.make_windows_options = WindowsOptions
    _pod.make_container_facts = ContainerFacts
    _pod.make_pod_facts = PodFacts
    _rules.make_sandbox_decision = lambda n, h, u, c, s: SandboxDecision(n, h, u, c, steps=s)

def paired(label, items, fa, fb, rounds=40):
    ratios = []
    for _ in range(rounds):
        a = t(fa, items); b = t(fb, items); ratios.append(b / a)
    print(f"{label}: {statistics.median(ratios):.3f}")
paired("read_pod dict fast path: general/fast (read_pod only)", ok, _pod.read_pod, general)
def sc_noinline(x):
    profile = _profile.kubelet_profile("1.32", None)
    d = _rules.decide_sandbox(_pod.read_pod(x), profile.sets_namespace_options)
    return _messages.sandbox_config_message(d)
paired("inline profile lookup: via kubelet_profile / inline (dict row)", ok, sc, sc_noinline)

