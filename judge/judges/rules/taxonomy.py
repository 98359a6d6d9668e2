"""Fault families and impacts: what a mechanism or a symptom is called, in words people write.

A *family* is a kind of injected mutation (wrong image, missing env var, DNS policy, ...). Its
`terms` name the mutation itself; its `category` words only name the area ("a TLS issue", "an
image problem"), which characterises the fault without stating the mutation. Families of one
`group` are neighbours; `GENERIC` words ("a configuration problem") characterise a group only.
An *impact* is what the fault does (image pull errors, Pending pods, connection refused, ...).
Terms are regular expressions over lowercased text, matched at word boundaries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from .vocabulary import Vocabulary


@dataclass(frozen=True)
class Family:
    """A kind of fault (e.g. OOM kill, bad image): the terms that name it, its group, the
    vaguer terms naming only its area (`category`: "TLS", "image"), the impacts it causes,
    related families and mutually exclusive variants.
    """

    name: str
    group: str
    terms: tuple[str, ...]
    category: tuple[str, ...] = ()
    impacts: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    category_pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    variant_patterns: dict[str, re.Pattern[str]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def variants_in(self, text: str) -> set[str]:
        """Which of the family's mutually exclusive kinds (liveness vs readiness) `text` names."""
        return {v for v, p in self.variant_patterns.items() if p.search(text)}

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", _compile(self.terms))
        object.__setattr__(self, "variant_patterns", {v: _compile((v,)) for v in self.variants})
        object.__setattr__(
            self, "category_pattern", _compile(self.category) if self.category else None
        )


_WORD = "[a-z0-9]"


def _compile(terms: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(f"(?<!{_WORD})(?:" + "|".join(terms) + f")(?!{_WORD})")


FAMILIES: tuple[Family, ...] = (
    Family(
        "image",
        "config",
        (
            r"(?:wrong|bad|faulty|buggy|incorrect|invalid|non-?existent|missing|broken|"
            r"incompatible|unavailable)\s+(?:\w+\s+)?(?:container\s+)?image",
            r"image\s+(?:tag|version|reference|name)",
            r"image\s+(?:\S+\s+)?(?:does not|doesn't) exist",
            r"(?:can't|cannot|could\s+not|couldn't|unable\s+to|fails?\s+to)\s+(?:find|locate|fetch|get)\s+"
            r"(?:its\s+|the\s+|an?\s+)?(?:\w+\s+)?image",
            r"image\s+(?:\S+\s+)?(?:not\s+found|is\s+gone)",
            r"manifest\s+unknown",
            r"(?:pull|pulling|pulls)\s+(?:the\s+|a\s+|its\s+)?(?:\w+\s+)?(?:container\s+)?image",
            r"pull access denied",
            r"image\s+(?:was|is|has been)\s+(?:changed|updated|set|rolled|upgraded)",
            r"(?:upgraded|updated|rolled|changed|pinned)\s+(?:\w+\s+){0,3}(?:to\s+)?(?:an?\s+)?"
            r"(?:\w+\s+)?image",
            r"incompatible\s+(?:\w+\s+)?version",
            r"executable",
            r"\$path",
        ),
        ("image", "images"),
        ("image_pull", "crash", "startup"),
    ),
    Family(
        "env",
        "config",
        (
            r"env(?:ironment)?[ -]?var(?:iable)?s?",
            r"envvar",
            r"env\s+(?:entry|setting|value)",
            r"shadow(?:s|ed|ing)?",
            r"[a-z][a-z0-9]*_[a-z0-9_]+\s+(?:is\s+|was\s+)?(?:unset|missing|removed|not\s+set|empty|undefined|dropped)",
            r"(?:missing|unset|removed|no|dropped)\s+[a-z][a-z0-9]*_[a-z0-9_]+",
            r"(?:address|config\w*)\s+variables?",
            r"variables?\s+(?:\S+\s+){0,6}missing",
            r"defines?\s+\S+\s+twice",
            r"overrid\w+",
            r"duplicate\w*\s+(?:env|key|entr)\w*",
        ),
        ("environment",),
        ("crash", "connection", "errors"),
        ("config",),
    ),
    Family(
        "port",
        "network",
        (
            r"(?:target|container|host|service|backend|wrong|incorrect|listening)\s*[-_]?port",
            r"port\s+(?:\d+|number|mismatch|conflict|collision)",
            r"ports?\s+(?:is|are)\s+(?:already\s+)?(?:in use|occupied|taken)",
            r"address already in use",
            r"(?:bind|binds|binding)\s+(?:to\s+)?(?:port|\d+)",
            r"targetport",
            r"containerport",
            r"hostport",
        ),
        (r"ports?",),
        ("connection", "errors", "pending", "crash"),
        (),
    ),
    Family(
        "dns",
        "network",
        (
            r"dns\w*",
            r"coredns",
            r"dnspolicy",
            r"name resolution",
            r"resolv\.conf",
            r"nxdomain",
            r"(?:could not|cannot|can't|unable to|fails? to|failed to)\s+resolve",
            r"resolv(?:e|ing|er)",
            r"lookup",
        ),
        (),
        ("dns_fail", "connection", "errors"),
        (),
        # Where resolution breaks: the pod's own DNS settings, or the cluster's DNS server.
        (
            r"dns\s*polic(?:y|ies)|dnspolicy|resolv\.conf|nameservers?|dnsconfig|ndots",
            r"coredns|kube-?dns",
        ),
    ),
    Family(
        "network_policy",
        "network",
        (
            r"network\s*polic(?:y|ies)",
            r"networkpolicy",
            r"deny[- ]all",
            r"(?:blocks?|blocking|blocked|denies|denying|denied)\s+(?:\w+\s+){0,3}"
            r"(?:traffic|ingress|egress|connections?)",
            r"(?:ingress|egress)\s+(?:and\s+egress\s+)?(?:traffic\s+)?(?:rules?|blocked|denied)",
            r"firewall",
            r"network isolation",
            r"isolat(?:ed|es|ion)",
        ),
        ("network",),
        ("connection", "errors"),
    ),
    Family(
        "selector",
        "network",
        (
            r"(?:service\s+|pod\s+|label\s+)?selector",
            r"labels?\s+(?:mismatch|do not match|don't match)",
            r"(?:no|empty|zero|missing)\s+endpoints?",
            r"wrong\s+pods?",
            r"selects?\s+(?:the\s+)?wrong",
        ),
        ("labels?",),
        ("unavailable", "connection", "errors"),
    ),
    Family(
        "probe",
        "config",
        (
            r"(?:liveness|readiness|startup|health)\s*[-_]?probes?",
            r"liveness",
            r"readiness",
            r"probes?",
            r"/healthz?",
            r"health\s*check\w*",
            r"initialdelayseconds",
            r"failurethreshold",
            r"periodseconds",
        ),
        (),
        ("restarts", "unready", "crash"),
        (),
        ("liveness", "readiness", "startup"),
    ),
    Family(
        "memory",
        "resources",
        (
            r"memory\s+(?:limits?|requests?|quota|pressure|exhaustion|leak)",
            r"out of memory",
            r"oom\w*",
            r"memory",
            r"heap",
            r"/dev/shm",
            r"shm",
        ),
        (),
        ("oom", "restarts", "crash", "latency", "errors"),
        ("quota", "requests", "gc"),
    ),
    Family(
        "cpu",
        "resources",
        (
            r"cpu\s+(?:limits?|requests?|quota|throttl\w*|saturation|starvation|usage)",
            r"throttl\w*",
            r"cfs",
            r"cpu",
        ),
        (),
        ("latency", "errors"),
        ("requests", "load"),
    ),
    Family(
        "requests",
        "resources",
        (
            r"resource\s+(?:requests?|limits?)",
            r"requests?\s+(?:too|is too|are too)\s+(?:large|small|high|low)",
            r"(?:too|excessive|insufficient)\s+(?:large|small|high|low)?\s*(?:cpu|memory)\s+requests?",
            r"insufficient\s+(?:cpu|memory)",
        ),
        (),
        ("pending", "oom"),
        ("cpu", "memory", "quota", "autoscaling"),
    ),
    Family(
        "quota",
        "resources",
        (r"resource\s*quota", r"resourcequota", r"quota", r"limitrange", r"exceeded quota"),
        (),
        ("pending", "errors"),
        ("memory", "requests"),
    ),
    Family(
        "scheduling",
        "scheduling",
        (
            r"node\s*selector",
            r"nodeselector",
            r"(?:pod\s+)?(?:anti-?)?affinity",
            r"taints?",
            r"toleration\w*",
            r"(?:non-?existent|missing|unknown|wrong)\s+node",
            r"no\s+(?:matching|suitable|available)\s+nodes?",
            r"unschedulable",
            r"(?:can(?:not|'t)|could not|unable to)\s+be\s+scheduled",
            r"priority\s*class",
            r"priorityclass",
            r"preempt\w*",
        ),
        ("scheduling", "scheduler"),
        ("pending",),
    ),
    Family(
        "scale",
        "capacity",
        (
            r"scaled?\s+(?:down\s+)?(?:to\s+)?(?:zero|0)",
            r"(?:zero|0)\s+replicas?",
            r"replicas?\s*(?:count\s+)?(?:[:=]|set to|is|of|to)?\s*(?:zero|0)\b",
            r"replica\s+count",
            r"replicas?",
        ),
        ("scal\\w+",),
        ("unavailable", "connection", "pending", "unready"),
        ("autoscaling",),
    ),
    Family(
        "autoscaling",
        "capacity",
        (r"hpa", r"horizontalpodautoscaler", r"(?:horizontal\s+pod\s+)?autoscal\w+"),
        (),
        ("latency", "errors"),
        ("scale", "requests", "cpu"),
    ),
    Family(
        "auth",
        "security",
        (
            r"auth\w*",
            r"password\w*",
            r"credentials?",
            r"permissions?",
            r"revok\w*",
            r"unauthori[sz]ed",
            r"not authori[sz]ed",
            r"access (?:denied|revoked)",
            r"sasl",
            r"(?:unregistered|missing|deleted|removed)\s+(?:db\s+|database\s+)?user",
            r"user\s+(?:\w+\s+)?(?:not registered|unregistered|does not exist|was deleted|removed)",
            r"privileges?",
            r"roles?",
            r"login",
        ),
        ("access",),
        ("auth_fail", "crash", "errors"),
        ("secret", "rbac"),
    ),
    Family(
        "rbac",
        "security",
        (
            r"rbac",
            r"clusterrole\w*",
            r"rolebinding",
            r"service\s*account",
            r"serviceaccount",
            r"forbidden",
        ),
        (),
        ("auth_fail", "errors"),
        ("auth",),
    ),
    Family(
        "secret",
        "security",
        (r"secrets?", r"stale\s+(?:\w+\s+)?credentials?", r"rotat\w+"),
        (),
        ("auth_fail", "errors"),
        ("auth", "env", "tls"),
    ),
    Family(
        "tls",
        "security",
        (
            r"expired\s+(?:tls\s+|ssl\s+|x509\s+)?cert\w*",
            r"cert\w*\s+(?:\w+\s+){0,3}(?:expired|is expired|has expired|not yet valid)",
            r"expired",
            r"cert\w*\s+(?:mismatch|is invalid|invalid|untrusted|signed by unknown)",
            r"(?:mismatched|wrong|invalid|self-signed|untrusted)\s+(?:\w+\s+)?(?:cert\w*|ca|keys?)",
            r"x509",
            r"cert\w*\s+(?:\S+\s+){0,5}(?:is\s+|are\s+)?(?:invalid|broken|expired|mismatch\w*|wrong|misconfigured|missing|not\s+(?:properly\s+)?configured)",
            r"(?:invalid|broken|bad|wrong|expired|mismatched|missing|misconfigured)\s+(?:\w+\s+){0,2}cert\w*",
            r"ca\s*bundle",
            r"cabundle",
        ),
        (r"tls", r"ssl", r"https", r"cert\w*"),
        ("tls_fail", "connection", "errors"),
        ("auth", "secret"),
    ),
    Family(
        "storage",
        "storage",
        (
            r"pvcs?\s+(?:\S+\s+){0,4}(?:not found|missing|mismatch\w*|shared|conflict\w*|does(?:n't| not) exist|pending|unbound)",
            r"(?:claim|volume)\s*names?",
            r"claimname\S*",
            r"readwriteonce",
            r"rwo",
            r"access\s*mode",
            r"multi-?attach",
            r"storage\s*class\w*",
            r"storageclass",
            r"mount\s+conflict\w*",
            r"(?:volume|node)\s+affinity",
            r"sectors?",
            r"i/o\s+errors?",
            r"(?:data|disk|volume|files?|database|db|blocks?|sectors?|storage|index)\s+(?:is\s+|was\s+)?corrupt\w*",
            r"corrupt\w*\s+(?:the\s+)?(?:data|disks?|volumes?|files?|database|db|blocks?|sectors?|storage|index)",
            r"emptydir",
        ),
        (
            r"storage",
            r"volumes?",
            r"pvcs?",
            r"persistent\s*volume\w*",
            r"persistentvolume\w*",
            r"disks?",
            r"mounts?",
        ),
        ("pending", "startup", "errors"),
        ("disk_space",),
    ),
    Family(
        "deleted",
        "config",
        (
            r"(?:was|were|has\s+been|have\s+been|got|is|are)\s+(?:\w+\s+)?(?:deleted|removed)",
            r"deleted",
            r"(?:missing|no\s+such)\s+(?:k8s\s+|kubernetes\s+)?service",
            r"service\s+(?:\S+\s+)?(?:does\s+not|doesn't)\s+exist",
        ),
        (),
        ("dns_fail", "connection", "errors"),
        ("dns", "env", "config"),
    ),
    Family(
        "config",
        "config",
        (
            r"config\s*maps?",
            r"configmap",
            r"config(?:uration)?\s+(?:keys?|file|entry|value|setting)",
            r"missing\s+(?:\w+\s+)?(?:config\w*|keys?|settings?)",
            r"keys?\s+(?:is\s+|are\s+)?missing",
            r"feature\s+flags?",
            r"flagd",
            r"(?:database|db|mongo\w*)\s+(?:url|address|uri)",
        ),
        (),
        ("crash", "errors"),
        ("env",),
    ),
    Family(
        "code",
        "code",
        (
            r"bugs?",
            r"buggy",
            r"internal\s+errors?",
            r"persistent\s+errors?",
            r"code\s+(?:bug|defect|change|path)",
            r"(?:unhandled\s+)?exceptions?",
            r"panics?",
            r"segfault",
            r"regression",
            r"sql",
            r"column",
            r"quer(?:y|ies)",
            r"wrong\s+(?:binary|bin|entrypoint|command)",
            r"binary",
            r"entrypoint",
            r"command",
        ),
        ("application\\s+(?:error|issue|bug|level)", "application-level"),
        ("crash", "errors"),
    ),
    Family(
        "retry",
        "capacity",
        (
            r"retr(?:y|ies)\w*",
            r"retry storm",
            r"timeouts?\s+(?:setting|value|config\w*|of|is set|too)",
            r"rpc\s+timeout",
            r"metastab\w*",
        ),
        (),
        ("latency", "errors"),
        ("load",),
    ),
    Family(
        "load",
        "capacity",
        (
            r"load\s*(?:spike|surge|generator)",
            r"(?:traffic|request)\s+(?:spike|surge|flood\w*)",
            r"flood\w*",
            r"surge",
            r"overload\w*",
            r"saturat\w*",
            r"imbalance\w*",
            r"uneven",
            r"capacity",
        ),
        (),
        ("latency", "errors"),
        ("cpu", "retry"),
    ),
    Family(
        "gc",
        "resources",
        (r"gogc", r"garbage collect\w*", r"\bgc\b"),
        (),
        ("latency",),
        ("memory", "cpu"),
    ),
    Family(
        "kafka",
        "messaging",
        (
            r"kafka",
            r"topics?",
            r"partitions?",
            r"consumers?\s+(?:lag|group|stuck|blocked)",
            r"poison\s*pill",
            r"queue\w*",
            r"producers?",
            r"head[- ]of[- ]line",
        ),
        (),
        ("latency", "errors"),
    ),
    Family(
        "webhook",
        "admission",
        (
            r"(?:validating|mutating|admission)\s*webhook\w*",
            r"webhook\w*",
            r"admission\w*",
            r"gatekeeper",
            r"pod\s*security",
            r"psa",
            r"security\s*context",
            r"runasuser",
            r"runasnonroot",
            r"restricted",
        ),
        (),
        ("startup", "errors"),
    ),
    Family(
        "node",
        "node",
        (
            r"kubelet",
            r"node\s+(?:failure|crash\w*|down|not ready|notready|pressure)",
            r"diskpressure",
            r"disk\s*pressure",
            r"eviction\w*",
            r"evicted",
            r"clock\s*(?:drift|skew)",
            r"clock",
            r"ntp",
            r"time\s*(?:drift|skew)",
            r"conntrack",
            r"ip\s*(?:address\s+)?(?:pool|exhaust\w*)",
            r"ipam",
            r"cidr",
            r"calico",
            r"bgp\w*",
            r"cni",
            r"kube-?proxy",
        ),
        (),
        ("startup", "pending", "errors", "restarts"),
    ),
    Family(
        "limits",
        "resources",
        (
            r"file\s*descriptors?",
            r"ulimit",
            r"too many open files",
            r"ephemeral\s*ports?",
            r"port\s*range",
            r"fd\s*exhaust\w*",
        ),
        (),
        ("errors", "connection"),
    ),
    Family(
        "rollout",
        "config",
        (
            r"rolling\s*update\s+(?:strategy|settings?|parameters?)",
            r"update\s*strategy",
            r"maxunavailable",
            r"maxsurge",
            r"max\s+(?:unavailable|surge)",
        ),
        (
            r"rollout",
            r"rolling\s*update",
            r"deploy(?:ment)?\s+(?:is\s+)?(?:stuck|bad)",
            r"bad\s+deploy\w*",
        ),
        ("unavailable", "startup"),
    ),
    Family(
        "init",
        "config",
        (r"init\s*[-_]?containers?", r"initcontainers?", r"sidecars?", r"finaliz\w+"),
        (),
        ("startup", "pending"),
    ),
    Family(
        "routing",
        "network",
        (
            r"ingress\s+(?:rule|route|routing|backend|path)\w*",
            r"misrout\w*",
            r"rout(?:es|ed|ing)\s+(?:\w+\s+){0,3}to\s+(?:the\s+)?wrong",
            r"backend\s+rule",
            r"internaltrafficpolicy",
            r"traffic\s*policy",
        ),
        (),
        ("errors",),
        ("dns",),
    ),
    Family(
        "disk_io",
        "resources",
        (
            r"(?:disk|block|storage|fs|file\s*system)\s+(?:read|write|r/w)s?",
            r"(?:disk|block|storage)\s+(?:\w+\s+)?(?:i/o|io|iops)",
            r"(?:read|write|r/w)\s+(?:i/o|io|iops|operations|throughput|load|activity|traffic|bandwidth)",
            r"(?:i/o|io)\s+(?:load|consumption|usage|pressure|saturation|contention|bottleneck|wait"
            r"|intensive|heavy|throttl\w*|spikes?|activity|operations|throughput|bound|stress|hog)",
            r"(?:high|heavy|excessive|increased|elevated|intensive)\s+(?:disk\s+)?(?:i/o|io|iops)",
            r"iops",
            r"io\s*wait",
            r"disk[- ](?:intensive|bound|contention|bottleneck|throughput|activity|pressure|stress)",
            r"file\s+moving",
            r"(?:fs|disk)_(?:reads?|writes?)\w*",
        ),
        (),
        ("latency", "errors"),
        (),
        (r"reads?|reading", r"writes?|writing|written"),
    ),
    Family(
        "disk_space",
        "resources",
        (
            r"disk\s+space",
            r"(?:disk|volume|filesystem|file\s+system|storage|partition)\s+(?:is\s+|was\s+)?"
            r"(?:full|exhausted|filling\s+up|filled(?:\s+up)?|running\s+out)",
            r"(?:no|low|insufficient)\s+(?:free\s+)?(?:disk|storage)\s+space",
            r"enospc",
            r"no space left",
            r"(?:high|excessive)\s+disk\s+(?:space\s+)?usage",
            r"disk\s+(?:usage|utili[sz]ation)",
            r"out\s+of\s+(?:disk|storage)",
        ),
        (),
        ("errors", "crash", "startup"),
        ("storage",),
    ),
    Family(
        "net_delay",
        "network",
        (
            r"(?:network|packet|net|tcp|transport)\s+(?:\w+\s+)?(?:latency|latencies|delays?)",
            r"(?:latency|delay)\s+(?:injection|injected|fault|chaos)",
            r"(?:injected|added|artificial)\s+(?:network\s+)?(?:latency|delay)",
            r"netem",
            r"network\s+(?:is\s+)?slow\w*",
            r"slow\s+network",
            r"delay(?:ed|ing)?\s+(?:network\s+)?packets?",
            r"packets?\s+(?:are\s+|were\s+)?delayed",
        ),
        (),
        ("latency", "connection", "errors"),
    ),
    Family(
        "packet_loss",
        "network",
        (
            r"packet\s+(?:\w+\s+)?loss",
            r"packets?\s+(?:are\s+|were\s+|being\s+)?(?:dropped|lost)",
            r"(?:dropped|dropping|drops?|lost|losing)\s+(?:network\s+)?packets?",
            r"network\s+loss",
            r"loss\s+of\s+packets",
        ),
        (),
        ("connection", "errors", "latency"),
    ),
    Family(
        "packet_corruption",
        "network",
        (
            r"(?:packet|network|frame)s?\s+(?:\w+\s+)?corrupt\w*",
            r"corrupt\w*\s+(?:network\s+)?(?:packets?|frames?)",
            r"checksum\s+(?:errors?|failures?|mismatch\w*)",
        ),
        (),
        ("connection", "errors", "latency"),
    ),
    Family(
        "packet_retransmission",
        "network",
        (
            r"retransmi\w+",
            r"packet\s+duplicat\w+",
            r"duplicat\w+\s+packets?",
        ),
        (),
        ("latency", "connection", "errors"),
    ),
    Family(
        "process_kill",
        "availability",
        (
            r"process\s+(?:termination|terminated|killed|kill\w*|crash\w*|exit\w*|died|death|stopped)",
            r"(?:containers?|pods?|process(?:es)?|instances?)\s+(?:was\s+|were\s+|got\s+|being\s+|is\s+)?"
            r"(?:killed|terminated|stopped)",
            r"(?:kill\w*|terminat\w+|stopp\w+)\s+(?:the\s+|its\s+)?(?:main\s+|\w+\s+)?"
            r"(?:process(?:es)?|containers?|pods?)",
            r"sig(?:kill|term)",
            r"pod\s+(?:failure|kill)",
        ),
        (),
        ("crash", "restarts", "unavailable", "errors", "connection"),
        ("db_down",),
    ),
    Family(
        "db_connections",
        "capacity",
        (
            r"connection\s+(?:pool|limit)s?",
            r"too many connections",
            r"max(?:imum)?[_ ]?connections",
            r"connections?\s+(?:\w+\s+)?(?:exhausted|exhaustion|limit|saturat\w*)",
            r"(?:exhausted|exhaustion\s+of)\s+(?:the\s+)?(?:\w+\s+)?connections",
        ),
        (),
        ("connection", "errors", "latency"),
        ("db_down", "limits"),
    ),
    Family(
        "db_down",
        "availability",
        (
            r"(?:db|database|mysql|redis|mongo\w*|postgres\w*)\s+(?:\w+\s+)?(?:is\s+|was\s+)?"
            r"(?:closed|close|shut\s*down|stopped)",
            r"(?:closed|closing|shut\s*down|stopped)\s+(?:the\s+)?(?:db|database)",
        ),
        (),
        ("connection", "errors", "unavailable"),
        ("process_kill", "db_connections"),
    ),
    Family(
        "lock",
        "code",
        (r"lock\w*", r"deadlock\w*", r"lock\s+contention"),
        (),
        ("latency", "errors"),
    ),
)
FAMILY = {f.name: f for f in FAMILIES}

# Characterisations vaguer than any family: they name a group only.
GENERIC: dict[str, re.Pattern[str]] = {
    "config": _compile(
        (r"misconfig\w*", r"config(?:uration)?\s+(?:issue|problem|error)", r"config")
    ),
    "network": _compile((r"network\w*", r"connectivity")),
    "resources": _compile(
        (r"resources?", r"resource\s+(?:exhaustion|limits?|pressure|contention)")
    ),
    "security": _compile((r"security",)),
    "capacity": _compile((r"capacity", r"performance", r"overload\w*")),
    "code": _compile(
        (
            r"application\s+(?:bug|error|crash|issue)s?",
            r"software",
            r"(?:returning|returns|throwing|throws)\s+(?:\w+\s+)?(?:errors?|exceptions?)",
        )
    ),
}

IMPACTS: dict[str, re.Pattern[str]] = {
    name: _compile(terms)
    for name, terms in {
        "image_pull": (
            r"imagepullbackoff",
            r"errimagepull",
            r"image\s*pull\w*",
            r"pull\w*\s+(?:the\s+)?image",
            r"failed to pull",
        ),
        "crash": (
            r"crashloop\w*",
            r"crash\w*",
            r"restart\w*",
            r"exit code",
            r"terminat\w+",
            r"error state",
            r"exits?",
            r"exited",
        ),
        "restarts": (r"restart\w*", r"killed", r"crashloop\w*", r"terminat\w+", r"evict\w*"),
        "startup": (
            r"(?:cannot|can't|unable\s+to|fails?\s+to|failed\s+to)\s+create",
            r"failedcreate",
            r"under-?replicated",
            r"rejected",
            r"admission\s+(?:denied|rejects?\w*)",
            r"(?:fail|fails|failing|failed|unable|cannot|can't)\s+to\s+start",
            r"not start\w*",
            r"startup",
            r"never become ready",
            r"not ready",
            r"containercreating",
            r"stuck",
            r"pending",
            r"crash\w*",
        ),
        "pending": (
            r"pending",
            r"unschedulable",
            r"failedscheduling",
            r"(?:cannot|can't|could not)\s+be\s+scheduled",
            r"not scheduled",
            r"scheduling\s+fail\w*",
        ),
        "unready": (
            r"(?:never|ever|rarely)\s+becomes?\s+ready",
            r"not ready",
            r"unready",
            r"readiness",
            r"0/1",
            r"no ready",
            r"removed from (?:the )?(?:service|endpoints)",
        ),
        "oom": (r"oom\w*", r"out of memory", r"memory\s+(?:exhaust\w*|pressure)"),
        "connection": (
            r"connection\s+(?:refused|reset|error|failure|timeout)s?",
            r"(?:cannot|can't|could not|unable to|fail\w* to)\s+(?:connect|reach)",
            r"unreachable",
            r"no reachable servers",
            r"dial\s+tcp",
            r"timed?\s*out",
            r"timeouts?",
            r"deadline exceeded",
        ),
        "errors": (
            r"(?:requests?|calls?|quer(?:y|ies)|operations?|endpoints?|flows?|pages?|actions?|lookups?|paths?|traffic)"
            r"\s+(?:\S+\s+){0,3}(?:fail\w*|error\w*|time\s*out|timing\s+out|break\w*|return\w*\s+(?:an\s+)?errors?)",
            r"(?:fail\w*|error\w*)\s+(?:\w+\s+){0,2}(?:requests?|calls?|quer(?:y|ies)|operations?)",
            r"5\d\ds?",
            r"5xx",
            r"error\s+rates?",
            r"errors?\s+(?:on|in|for|when|whenever|from|with)",
            r"exceptions?",
            r"errors?\s+out",
            r"(?:,|and|or)\s+[\w/-]+\s+fail(?:s|ed)?\b",
            r"fail(?:s|ed|ing)?\s+(?:immediately|intermittently|with|on|for)",
            r"(?:cannot|can't|unable\s+to)\s+(?:open|serve|process|complete|load|place|add)",
            r"return(?:s|ed|ing)?\s+(?:\w+\s+)?errors?",
            # Impact in users' terms: what people cannot do, what a page shows.
            r"(?:users?|customers?|shoppers?|travell?ers?|people|guests?|visitors?)\s+(?:\w+\s+){0,2}"
            r"(?:cannot|can't|could\s+not|couldn't|(?:are\s+)?unable\s+to|fail\s+to|get\s+(?:an?\s+)?"
            r"(?:errors?|timeouts?)|see\s+(?:an?\s+)?(?:errors?|timeouts?|failures?|empty|blank|missing))",
            r"(?:nobody|no\s+one)\s+can",
            r"(?:page|site|checkout|cart|login|search|results?)\s+(?:\w+\s+){0,2}(?:returns?|shows?|is|are)\s+"
            r"(?:an?\s+)?(?:errors?|blank|empty)",
        ),
        "unavailable": (
            r"unavailable",
            r"(?:is|are|went|goes)\s+down",
            r"outage",
            r"no endpoints?",
            r"not available",
            r"inaccessible",
        ),
        "latency": (
            r"latenc\w+",
            r"slow\w*",
            r"timed?\s*out",
            r"timeouts?",
            r"degrad\w+",
            r"delay\w*",
        ),
        "auth_fail": (
            r"auth\w*\s+(?:fail\w*|errors?)",
            r"unauthori[sz]ed",
            r"not authori[sz]ed",
            r"permission denied",
            r"access denied",
            r"401",
            r"403",
            r"forbidden",
        ),
        "dns_fail": (
            r"nxdomain",
            r"(?:could not|cannot|can't|unable to|fail\w* to)\s+resolve",
            r"name resolution",
            r"no such host",
            r"dns\s+(?:fail\w*|errors?|lookups?)",
        ),
        "tls_fail": (
            r"tls\s+(?:handshake|error)\w*",
            r"handshake",
            r"x509",
            r"certificate\s+(?:error|expired|invalid)",
            r"https",
        ),
    }.items()
}
# Impacts that follow from almost any fault: consistent with a truth that states any impact.
BROAD_IMPACTS = frozenset({"errors", "unavailable"})


# Groups whose faults are a changed setting: "a misconfiguration" is a vaguer but compatible
# characterisation of any of them (not of a code bug, a load surge or a node crash).
CONFIGURED_GROUPS = frozenset(
    {"config", "network", "resources", "security", "storage", "admission"}
)


def vaguely_configured(generic: set[str], truth_groups: set[str]) -> bool:
    """Whether the text only says "config" and the truth is a fault of a configurable group
    (config, network, resources, security, storage, admission).
    """
    return "config" in generic and bool(truth_groups & CONFIGURED_GROUPS)


# The rules ask the same text (a diagnosis's claim, a truth's mechanism) several times: the last
# readings are kept (as many as the judge keeps parsed cases, whose texts they are), and handed
# out as fresh sets.
_READINGS = 256


def families_in(text: str) -> set[str]:
    """Families whose mutation terms occur in `text` (lowercased)."""
    return set(_families_in(text))


_FAMILIES = Vocabulary(((f.name, f.pattern) for f in FAMILIES), _WORD)
_CATEGORIES = Vocabulary(
    ((f.name, f.category_pattern) for f in FAMILIES if f.category_pattern), _WORD
)
_GENERIC = Vocabulary(GENERIC.items(), _WORD)
_IMPACTS = Vocabulary(IMPACTS.items(), _WORD)


@lru_cache(maxsize=_READINGS)
def _families_in(text: str) -> frozenset[str]:
    return _FAMILIES.present(text)


def categories_in(text: str) -> set[str]:
    """Families named only by their area ("TLS", "image") in `text`."""
    return set(_categories_in(text))


@lru_cache(maxsize=_READINGS)
def _categories_in(text: str) -> frozenset[str]:
    return _CATEGORIES.present(text)


def generic_groups_in(text: str) -> set[str]:
    """The groups that `text` names only vaguely ("misconfiguration", "network issue")."""
    return set(_generic_groups_in(text))


@lru_cache(maxsize=_READINGS)
def _generic_groups_in(text: str) -> frozenset[str]:
    return _GENERIC.present(text)


def impacts_in(text: str) -> set[str]:
    """The impacts (latency, errors, ...) that `text` describes."""
    return set(_impacts_in(text))


@lru_cache(maxsize=_READINGS)
def _impacts_in(text: str) -> frozenset[str]:
    return _IMPACTS.present(text)


def compatible(claimed: str, truth: set[str]) -> bool:
    """A claimed family agrees with the truth's when it is one of them or a named neighbour."""
    if claimed in truth:
        return True
    return any(claimed in FAMILY[t].related or t in FAMILY[claimed].related for t in truth)


def first_match(patterns: list[re.Pattern[str]], text: str) -> int | None:
    """The earliest offset at which any pattern matches `text`; None when none does."""
    hits = [m.start() for p in patterns if (m := p.search(text))]
    return min(hits) if hits else None


# Impacts specific enough that stating one the truth does not imply contradicts it (OOMKilled
# restarts when the pods run but cannot connect), and the families that imply each.
_SPECIFIC_IMPACTS = {
    "oom": {"memory"},
    "image_pull": {"image"},
    "pending": {"scheduling", "requests", "storage", "quota"},
}
_DENIED = re.compile(
    r"\b(?:no|not|never|without|zero)\s+(?:\w+\s+)?(restart\w*|crash\w*|oom\w*|errors?|pending)",
    re.I,
)


# A remedy in the imperative (`restart geo`, `; delete the pods`) states no impact.
_REMEDY_IMPERATIVE = re.compile(
    r"(?:^|[.;,:!]\s*|\b(?:and|then|so)\s+)(?:please\s+|just\s+)?(?:restart|redeploy|bounce|delete|kill)"
    r"\s+(?:the\s+|its\s+|all\s+)?[\w/-]+(?:\s+pods?)?",
    re.I,
)


def without_denied_impacts(text: str) -> str:
    """`no restarts, just NotReady` states NotReady, not restarts; `restart geo` states none."""
    return _REMEDY_IMPERATIVE.sub(" ", _DENIED.sub(" ", text))


def contradicted_impacts(text: str, truth_impacts: set[str], truth_families: set[str]) -> set[str]:
    """Impacts the diagnosis states (or denies) against what the truth states or implies."""
    stated = impacts_in(without_denied_impacts(text))
    out = {
        impact
        for impact, families in _SPECIFIC_IMPACTS.items()
        if impact in stated and impact not in truth_impacts and not families & truth_families
    }
    denied = impacts_in(" ".join(m.group(1) for m in _DENIED.finditer(text)))
    return out | (denied & truth_impacts & {"restarts", "crash", "oom"})
