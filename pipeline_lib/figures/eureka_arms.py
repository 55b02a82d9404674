"""The arms the Eureka claims compare (not a plug-in: no NAME): labels as in the configs' ``analyses.eureka``
blocks, one control and the paper's interventions (Eureka-Moments, Sec. 5.2-5.3, Table 1)."""

BASE = "Softmax"  # the control arm of every comparison
INTERVENTIONS = {"lowtemp": "Softmax tau=1/3", "ht": "HT", "normsoftmax": "NormSoftmax", "normsoftmax_ht": "NormSoftmax+HT"}
# Table 1's higher-temperature arms (tau = 1/0.025 = 40 and 1/0.075 = 13.3 against sqrt(d_head)), which
# lower the Eureka-ratio there; run on the digits task, Table 1's own (config/eureka_table1.yaml)
HOTTER = {"tau_40": "Softmax tau=1/0.025", "tau_13": "Softmax tau=1/0.075"}
# Table 1's other rows on the digits task: those the paper says raise the Eureka-ratio, and weight decay 0.5,
# which it says lowers it
TABLE1_RAISES = {"normsoftmax_lowtemp": "NormSoftmax tau=1/3", "warmup20": "Warmup 20",
                 "qkv_scaling": "W_QKV grad scaling"}
TABLE1_LOWERS = {**HOTTER, "wd05": "WD 0.5"}
# the arms of Table 1's 'Acc.' claim (Sec. 5.2: "Decreasing the temperature and using NormSoftmax increases
# the Eureka-ratio, accuracy ...")
ACCURACY = {"lowtemp": "Softmax tau=1/3", "normsoftmax": "NormSoftmax"}
EXPERIMENTS = ["reasoning", "digits"]
NOPOS = "digits_nopos"  # Table 1 right: the No-position task, the same arms' labels as "digits"
RESNET = ("digits_resnet", "ResNet")  # the CNN control (Sec. 1): its experiment and arm


def arm_colors(rows: dict) -> tuple[list[str], dict[str, str]]:
    """The arm labels of ``rows`` (experiment -> arm label -> anything) in order of first appearance, and one
    colour per label, the same in every row and panel."""
    from .style import ARM_COLORS

    labels = list(dict.fromkeys(label for arms in rows.values() for label in arms))
    return labels, {label: ARM_COLORS[i % len(ARM_COLORS)] for i, label in enumerate(labels)}

