def forward(self, x):
    tmp_1 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter
    tmp_2 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter()
    tmp_3 = __import_torch_dot__dynamo_dot_utils.call_size
    tmp_4 = x
    tmp_5 = self._modules
    tmp_6 = self._modules['norm1']._parameters
    tmp_7 = tmp_5['qkv']._parameters
    tmp_8 = tmp_5['out']._parameters
    tmp_9 = tmp_5['norm2']._parameters
    tmp_10 = tmp_5['fc1']._parameters
    tmp_11 = tmp_5['fc2']._parameters
    tmp_12 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit
    __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit(tmp_2)
    graph_out_0 = __compiled_fn_3_d2fa9938_7e25_4bb6_ac53_89da4dded036(
        __import_torch_dot__dynamo_dot_utils.call_size(x, 0), tmp_4, self.
        _modules['norm1']._parameters['weight'], tmp_6['bias'], tmp_5['qkv'].
        _parameters['weight'], tmp_7['bias'], tmp_5['out']._parameters['weight'
        ], tmp_8['bias'], tmp_5['norm2']._parameters['weight'], tmp_9['bias'],
        tmp_5['fc1']._parameters['weight'], tmp_10['bias'], tmp_5['fc2'].
        _parameters['weight'], tmp_11['bias'])
    []
    []
    __temp_9 = []
    __temp_9.extend([])
    [__temp_9]
    return graph_out_0[0]
