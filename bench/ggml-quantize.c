// ggml-quantize TYPE ROWS COLS SRC.f32 IMATRIX.f32|- OUT.bin: ggml_quantize_chunk (libggml-base from node-llama-cpp)
// with an optional importance matrix; prints the seconds the quantisation took on stderr: wall time,
// then this thread's CPU time.
// Built by bench/llama-tools.ts (gcc); the truth for tests/quant/imatrix-quant.test.ts and the
// llama.cpp side of `npm run bench:quantize`.
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
size_t ggml_quantize_chunk(int type, const float * src, void * dst, int64_t start, int64_t nrows, int64_t n_per_row, const float * imatrix);
void ggml_quantize_init(int type);
size_t ggml_row_size(int type, int64_t ne);
static void * readall(const char * p, size_t * n) { FILE * f = fopen(p, "rb"); fseek(f, 0, SEEK_END); *n = ftell(f); fseek(f, 0, SEEK_SET); void * b = malloc(*n); fread(b, 1, *n, f); fclose(f); return b; }
int main(int argc, char ** argv) {
  int type = atoi(argv[1]); int64_t rows = atoll(argv[2]), cols = atoll(argv[3]);
  size_t n; float * src = readall(argv[4], &n);
  float * im = NULL; if (argc > 6 && argv[5][0] != '-') im = readall(argv[5], &n);
  const char * out = argv[argc - 1];
  ggml_quantize_init(type);
  size_t rb = ggml_row_size(type, cols);
  void * dst = malloc(rb * rows);
  struct timespec t0, t1, c0, c1;
  clock_gettime(CLOCK_MONOTONIC, &t0); clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
  size_t w = ggml_quantize_chunk(type, src, dst, 0, rows, cols, im);
  clock_gettime(CLOCK_MONOTONIC, &t1); clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
  fprintf(stderr, "%.6f s %.6f s\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), (c1.tv_sec - c0.tv_sec) + 1e-9 * (c1.tv_nsec - c0.tv_nsec));
  FILE * f = fopen(out, "wb"); fwrite(dst, 1, w, f); fclose(f);
  return 0;
}
