# Failed to decompile graphed: ModuleNotFoundError
