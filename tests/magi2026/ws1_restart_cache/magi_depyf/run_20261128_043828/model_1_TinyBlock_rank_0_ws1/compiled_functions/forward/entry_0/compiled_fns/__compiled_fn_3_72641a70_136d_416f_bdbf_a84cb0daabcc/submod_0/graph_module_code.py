


def forward(self, l_x_ : torch.Tensor, s77 : torch.SymInt, l_self_modules_norm1_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_norm1_parameters_bias_ : torch.nn.parameter.Parameter, l_self_modules_qkv_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_qkv_parameters_bias_ : torch.nn.parameter.Parameter):
    layer_norm = torch.nn.functional.layer_norm(l_x_, (32,), l_self_modules_norm1_parameters_weight_, l_self_modules_norm1_parameters_bias_, 1e-05);  l_x_ = l_self_modules_norm1_parameters_weight_ = l_self_modules_norm1_parameters_bias_ = None
    linear = torch._C._nn.linear(layer_norm, l_self_modules_qkv_parameters_weight_, l_self_modules_qkv_parameters_bias_);  layer_norm = l_self_modules_qkv_parameters_weight_ = l_self_modules_qkv_parameters_bias_ = None
    chunk = linear.chunk(3, dim = -1);  linear = None
    getitem = chunk[0]
    getitem_1 = chunk[1]
    getitem_2 = chunk[2];  chunk = None
    view = getitem.view(s77, 16, 4, 8);  getitem = None
    transpose = view.transpose(1, 2);  view = None
    view_1 = getitem_1.view(s77, 16, 4, 8);  getitem_1 = None
    transpose_1 = view_1.transpose(1, 2);  view_1 = None
    view_2 = getitem_2.view(s77, 16, 4, 8);  getitem_2 = s77 = None
    transpose_2 = view_2.transpose(1, 2);  view_2 = None
    return (transpose, transpose_1, transpose_2)
    