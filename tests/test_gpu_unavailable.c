/* Stands in for the gpu suites in a build without a CUDA compiler, so `ctest -L gpu` says why nothing ran
 * (CTest reports it as Skipped: tests/CMakeLists.txt). */
#include <stdio.h>

#include <criterion/criterion.h>

Test(gpu, suites_not_built) {
    printf("%s built without nvcc (TMA_CUDA=OFF or no CUDA compiler found): the gpu suites were not compiled\n",
           GPU_SKIP_MARK);
    fflush(stdout);
    cr_skip_test("built without nvcc (TMA_CUDA=OFF or no CUDA compiler found): the gpu suites were not compiled");
}
