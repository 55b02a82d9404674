"""Figure name -> its stage's build function (the rule name is the figure name)."""
from .figures import (eureka_accuracy, eureka_attention_distribution, eureka_probes, eureka_qkv_gradients,
                      eureka_table, fig2_attention_graph, fig3_attention_heatmap, fig4_embeddings, fig5_accuracy,
                      fig6_interpolation, fig7_param_tsne)

FIGURES = {
    "fig2_attention_graph": fig2_attention_graph.build,
    "fig3_attention_heatmap": fig3_attention_heatmap.build,
    "fig4_embeddings": fig4_embeddings.build,
    "fig5_accuracy": fig5_accuracy.build,
    "fig6_interpolation": fig6_interpolation.build,
    "fig7_param_tsne": fig7_param_tsne.build,
    "eureka_accuracy": eureka_accuracy.build,
    "eureka_table": eureka_table.build,
    "eureka_qkv_gradients": eureka_qkv_gradients.build,
    "eureka_attention_distribution": eureka_attention_distribution.build,
    "eureka_probes": eureka_probes.build,
}
