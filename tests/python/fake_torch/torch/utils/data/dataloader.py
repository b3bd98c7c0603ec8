"""A stand-in for PyTorch's DataLoader with no workers, for the host findings
(tests/python/host_script.py): its path ends in torch/utils/data/ as the real
one's does, which is what the report goes by; like the real one without
workers, it runs the dataset's own code in the thread that asks for a batch."""


class DataLoader:
    def __init__(self, dataset):
        self.dataset = dataset

    def __iter__(self):
        for index in range(len(self.dataset)):
            yield self._fetch(index)

    def _fetch(self, index):
        return self.dataset[index]
