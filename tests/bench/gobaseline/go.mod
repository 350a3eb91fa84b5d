module trainguard/bench/gobaseline

go 1.19
