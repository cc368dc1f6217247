"""The fio boundary: nothing outside this package builds fio command lines or reads fio output."""
