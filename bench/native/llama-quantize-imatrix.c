// llama.cpp's own quantiser (llama_model_quantize in node-llama-cpp's libllama) with a made-up
// importance matrix, for test models in the i-quant file types, which llama.cpp refuses to make at
// the lowest bits without one. The matrix is deterministic: for a tensor of n columns,
// w[j] = 1 + (j·37 mod 11)/10, a spread the quantisers weigh unevenly.
//
//   node bench/llama-quantize.mjs IN.gguf OUT.gguf FTYPE NAME:COLS ...   (compiles this file, then runs it)
//
// FTYPE is llama.cpp's llama_ftype number (IQ3_XXS 23, IQ3_S 26, IQ3_M 27, IQ2_M 29, ...).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "llama.h"

int main(int argc, char ** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s IN OUT FTYPE [NAME:COLS ...]\n", argv[0]);
        return 2;
    }
    const int n = argc - 4;
    struct llama_model_imatrix_data * im = calloc((size_t) n + 1, sizeof *im);
    for (int i = 0; i < n; i++) {
        char * spec = strdup(argv[4 + i]);
        char * colon = strrchr(spec, ':');
        if (!colon) { fprintf(stderr, "bad NAME:COLS %s\n", spec); return 2; }
        *colon = 0;
        const size_t cols = (size_t) atol(colon + 1);
        float * w = malloc(cols * sizeof *w);
        for (size_t j = 0; j < cols; j++) w[j] = 1.0f + (float) ((j * 37) % 11) / 10.0f;
        im[i].name = spec;
        im[i].data = w;
        im[i].size = cols;
    }
    llama_backend_init();
    struct llama_model_quantize_params p = llama_model_quantize_default_params();
    p.nthread = 1;
    p.ftype = (enum llama_ftype) atoi(argv[3]);
    p.imatrix = n > 0 ? im : NULL;
    const uint32_t rc = llama_model_quantize(argv[1], argv[2], &p);
    llama_backend_free();
    return rc == 0 ? 0 : 1;
}
