# __compiled_fn_2_5501b319_8c75_4add_b32d_66e407a3497b (backend=_TorchCompileInductorWrapper); its graphs are in the timeline's events
