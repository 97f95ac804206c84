def forward(self, x):
    tmp_1 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter
    tmp_2 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter()
    tmp_3 = self._modules
    tmp_4 = self._modules['fc1']._parameters
    tmp_5 = __import_torch_dot__dynamo_dot_utils.call_size
    tmp_6 = x
    tmp_7 = tmp_3['fc2']._parameters
    tmp_8 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit
    __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit(tmp_2)
    graph_out_0 = __compiled_fn_5_f1dc9ab1_7ede_43c8_a17d_028fbfda5ddc(self.
        _modules['fc1']._parameters['weight'], tmp_4['bias'],
        __import_torch_dot__dynamo_dot_utils.call_size(x, 0), tmp_6, tmp_3[
        'fc2']._parameters['weight'], tmp_7['bias'])
    []
    []
    __temp_9 = []
    __temp_9.extend([])
    [__temp_9]
    return graph_out_0[0]
