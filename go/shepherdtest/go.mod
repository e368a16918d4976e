module example.invalid/shepherd/go/shepherdtest

go 1.19
