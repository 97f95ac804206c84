# __compiled_fn_8_008e9f3a_2c2a_4ea5_aa49_3f5f4675d5d3 (backend=_TorchCompileInductorWrapper); its graphs are in the timeline's events
