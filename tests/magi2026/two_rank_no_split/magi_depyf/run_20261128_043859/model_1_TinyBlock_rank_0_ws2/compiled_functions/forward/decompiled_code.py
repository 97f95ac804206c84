def forward(self, x):
    __temp_1, __temp_2, __temp_3 = x.shape
    b = __temp_1
    s = __temp_2
    d = __temp_3
    __temp_7, __temp_8, __temp_9 = self.qkv(self.norm1(x)).chunk(3, dim=-1)
    q = __temp_7
    k = __temp_8
    v = __temp_9
    q = q.view(b, s, self.heads, self.hd).transpose(1, 2)
    k = k.view(b, s, self.heads, self.hd).transpose(1, 2)
    v = v.view(b, s, self.heads, self.hd).transpose(1, 2)
    y = attention_boundary(q, k, v).transpose(1, 2).reshape(b, s, d)
    x = x + self.out(y)
    return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
