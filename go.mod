module github.com/dtekit/dtekit

go 1.26
