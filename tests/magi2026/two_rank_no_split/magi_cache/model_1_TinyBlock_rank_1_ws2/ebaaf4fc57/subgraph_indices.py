{   (None, 0, 'inductor_standalone'): (   'artifact_shape_None_subgraph_0',
                                          '/home/user/mc2026/two_rank_no_split/magi_cache/model_1_TinyBlock_rank_1_ws2/ebaaf4fc57/artifact_shape_None_subgraph_0',
                                          1)}