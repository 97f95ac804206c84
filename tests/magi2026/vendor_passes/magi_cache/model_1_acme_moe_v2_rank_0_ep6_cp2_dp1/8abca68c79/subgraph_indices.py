{   (None, 0, 'inductor_standalone'): (   'artifact_shape_None_subgraph_0',
                                          '/home/user/mc2026/vendor_passes/magi_cache/model_1_acme_moe_v2_rank_0_ep6_cp2_dp1/8abca68c79/artifact_shape_None_subgraph_0',
                                          1),
    (None, 1, 'inductor_standalone'): (   'artifact_shape_None_subgraph_1',
                                          '/home/user/mc2026/vendor_passes/magi_cache/model_1_acme_moe_v2_rank_0_ep6_cp2_dp1/8abca68c79/artifact_shape_None_subgraph_1',
                                          0)}