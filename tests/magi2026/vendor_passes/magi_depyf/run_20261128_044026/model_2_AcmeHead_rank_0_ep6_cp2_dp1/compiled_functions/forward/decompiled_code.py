def forward(self, x):
    return self.fc2(torch.relu(self.fc1(x)))
