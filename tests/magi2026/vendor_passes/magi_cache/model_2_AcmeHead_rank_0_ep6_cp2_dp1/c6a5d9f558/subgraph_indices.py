{   (None, 0, 'inductor_standalone'): (   'artifact_shape_None_subgraph_0',
                                          '/home/user/mc2026/vendor_passes/magi_cache/model_2_AcmeHead_rank_0_ep6_cp2_dp1/c6a5d9f558/artifact_shape_None_subgraph_0',
                                          0)}