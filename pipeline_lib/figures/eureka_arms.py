"""The arms the Eureka claims compare (not a plug-in: no NAME): labels as in the default config's
``analyses.eureka`` blocks, one control and the paper's interventions (Eureka-Moments, Sec. 5.3, Table 1)."""

BASE = "Softmax"  # the control arm of every comparison
INTERVENTIONS = {"lowtemp": "Softmax tau=1/3", "ht": "HT", "normsoftmax": "NormSoftmax", "normsoftmax_ht": "NormSoftmax+HT"}
# Table 1's higher-temperature arms (tau = 1/0.025 = 40 and 1/0.075 = 13.3 against sqrt(d_head)), which
# lower the Eureka-ratio there; run on the reasoning task (config/eureka_table1.yaml)
HOTTER = {"tau_40": "Softmax tau=1/0.025", "tau_13": "Softmax tau=1/0.075"}
EXPERIMENTS = ["reasoning", "digits"]
