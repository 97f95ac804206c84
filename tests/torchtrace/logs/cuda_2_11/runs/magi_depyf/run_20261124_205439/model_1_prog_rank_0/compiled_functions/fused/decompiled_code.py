# Failed to decompile fused: ModuleNotFoundError
