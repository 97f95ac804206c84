# __compiled_fn_6_43cddf57_0281_4ced_b36e_7a499864d85b (backend=_TorchCompileInductorWrapper); its graphs are in the timeline's events
