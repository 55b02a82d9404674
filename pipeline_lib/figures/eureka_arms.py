"""The arms the Eureka claims compare (not a plug-in: no NAME): labels as in the default config's
``analyses.eureka`` blocks, one control and the paper's interventions (Eureka-Moments, Sec. 5.3, Table 1)."""

BASE = "Softmax"  # the control arm of every comparison
INTERVENTIONS = {"lowtemp": "Softmax tau=1/3", "ht": "HT", "normsoftmax": "NormSoftmax", "normsoftmax_ht": "NormSoftmax+HT"}
EXPERIMENTS = ["reasoning", "digits"]
