# __compiled_fn_4_bb32ead6_dde2_461f_9ec2_f2a17b962dbc (backend=_TorchCompileInductorWrapper); its graphs are in the timeline's events
