{   (None, 0, 'inductor_standalone'): (   'artifact_shape_None_subgraph_0',
                                          '/home/user/mc2026/offload_sidecars/magi_cache/model_1_TinyBlock_rank_0_ws1/6b351ccf21/artifact_shape_None_subgraph_0',
                                          1),
    (None, 1, 'inductor_standalone'): (   'artifact_shape_None_subgraph_1',
                                          '/home/user/mc2026/offload_sidecars/magi_cache/model_1_TinyBlock_rank_0_ws1/6b351ccf21/artifact_shape_None_subgraph_1',
                                          0)}