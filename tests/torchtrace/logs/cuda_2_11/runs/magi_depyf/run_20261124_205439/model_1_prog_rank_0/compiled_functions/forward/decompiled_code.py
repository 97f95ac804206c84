# Failed to decompile forward: ModuleNotFoundError
