/* Stands in for the gpu suites in a build without a CUDA compiler, so `ctest -L gpu` says why nothing ran. */
#include <criterion/criterion.h>

Test(gpu, suites_not_built) {
    cr_skip_test("built without nvcc (TMA_CUDA=OFF or no CUDA compiler found): the gpu suites were not compiled");
}
