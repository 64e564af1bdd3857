// clusterforge-gpu-perf: one GPU's matrix throughput, memory bandwidth and a known answer, for the health check's
// perf tier (`clusterforge-health --perf`, roles/health). Built at bake time with CUDA's nvcc and cuBLAS, which
// every NVIDIA GPU image has: a GEMM through the library jobs use measures what jobs get, and a program this small
// needs nothing else on the node (no Python, no framework).
//
//   clusterforge-gpu-perf [--device N] [--gemm-size N] [--gemm-seconds S] [--check-size N] [--copy-mib M]
//
// It prints one JSON object on one line:
//   {"index":0,"name":"NVIDIA H100 80GB HBM3","gemm_tflops":793.1,"hbm_gbps":3030.5,"checksum":"<16 hex>",
//    "checksum_ok":true,"bad_rows":0,"bad_cols":0,"seconds":4.2}
// and exits 0; on an error {"index":0,"error":"..."} and exit 1.
//
// - gemm_tflops: a bf16 N x N x N product (fp32 accumulation, bf16 out) repeated for S seconds after a warm-up,
//   so that a GPU that throttles once hot is measured hot; 2 N^3 flops per product.
// - hbm_gbps: a device-to-device copy of M MiB, bytes read plus bytes written per second (the figure HBM
//   bandwidth is quoted in).
// - the known answer: C = A x B with A, B of N x N entries in {-1, 0, 1} (bf16, exact) and C in fp32. Every partial
//   sum is an integer of magnitude <= N <= 2^24, exact in fp32 whatever the order of accumulation, so C is the
//   same on every healthy GPU of any model, library version or algorithm. `checksum` is a position-keyed hash of C
//   that peers compare; `checksum_ok` checks C itself against row and column sums computed here on the CPU from A
//   and B (algorithm-based fault tolerance, Huang and Abraham 1984): a wrong element changes its row's and its
//   column's sum, so `bad_rows` and `bad_cols` say where.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int device_index = 0;

void fail(const std::string &what) {
  std::string text;
  for (char c : what) {
    if (c == '"' || c == '\\') text += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) text += c;
  }
  std::printf("{\"index\":%d,\"error\":\"%s\"}\n", device_index, text.c_str());
  std::fflush(stdout);
  std::exit(1);
}

void check(cudaError_t status, const char *call) {
  if (status != cudaSuccess) fail(std::string(call) + ": " + cudaGetErrorString(status));
}

void check(cublasStatus_t status, const char *call) {
  if (status != CUBLAS_STATUS_SUCCESS) fail(std::string(call) + ": cuBLAS status " + std::to_string(status));
}

#define CHECK(call) check((call), #call)

// splitmix64 (Steele, Lea and Flood 2014): the generator of every input and of the hash, here and in the tests'
// reference (benchmarks/gpu_perf_reference.py), which recomputes the recorded checksum.
__host__ __device__ inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// the known answer's inputs: entry i of matrix `which` (0: A, 1: B) in {-1, 0, 1}
inline int trit(uint64_t which, uint64_t i) { return static_cast<int>(splitmix64((which << 40) ^ i) % 3) - 1; }

// bf16 of a small integer: the top half of its float's bits (exact for -1, 0, 1)
inline uint16_t bf16_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

// the throughput inputs: uniform in [-1, 1), made on the GPU (8192^2 per matrix would take a second on the CPU)
__global__ void fill_uniform(__nv_bfloat16 *out, uint64_t n, uint64_t seed) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint64_t r = splitmix64(seed ^ i);
    out[i] = __float2bfloat16(static_cast<float>(r >> 40) / static_cast<float>(1ULL << 23) - 1.0f);
  }
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Options {
  int gemm_size = 8192;
  double gemm_seconds = 3.0;
  int check_size = 4096;
  int copy_mib = 2048;
};

double gemm_tflops(cublasHandle_t handle, const Options &options) {
  const int n = options.gemm_size;
  const uint64_t elements = static_cast<uint64_t>(n) * n;
  __nv_bfloat16 *a, *b, *c;
  CHECK(cudaMalloc(&a, elements * sizeof *a));
  CHECK(cudaMalloc(&b, elements * sizeof *b));
  CHECK(cudaMalloc(&c, elements * sizeof *c));
  fill_uniform<<<1024, 256>>>(a, elements, 1);
  fill_uniform<<<1024, 256>>>(b, elements, 2);
  CHECK(cudaGetLastError());
  const float alpha = 1.0f, beta = 0.0f;
  auto product = [&] {
    CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n,
                       &beta, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  for (int i = 0; i < 3; ++i) product();
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  // batches of 10 until the time is spent: the figure is the whole timed run's, throttling included
  long products = 0;
  float elapsed_ms = 0.0f;
  const double until = now() + options.gemm_seconds;
  CHECK(cudaEventRecord(start));
  do {
    for (int i = 0; i < 10; ++i) product();
    products += 10;
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
  } while (now() < until);
  CHECK(cudaEventElapsedTime(&elapsed_ms, start, stop));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  return 2.0 * n * static_cast<double>(n) * n * products / (elapsed_ms / 1e3) / 1e12;
}

double hbm_gbps(const Options &options) {
  const size_t bytes = static_cast<size_t>(options.copy_mib) << 20;
  void *from, *to;
  CHECK(cudaMalloc(&from, bytes));
  CHECK(cudaMalloc(&to, bytes));
  CHECK(cudaMemset(from, 1, bytes));
  for (int i = 0; i < 3; ++i) CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  const int copies = 20;
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < copies; ++i) CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice));
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float elapsed_ms = 0.0f;
  CHECK(cudaEventElapsedTime(&elapsed_ms, start, stop));
  CHECK(cudaFree(from));
  CHECK(cudaFree(to));
  return 2.0 * static_cast<double>(bytes) * copies / (elapsed_ms / 1e3) / 1e9;  // read + write
}

struct Answer {
  uint64_t checksum = 0;
  long bad_rows = 0;
  long bad_cols = 0;
};

Answer known_answer(cublasHandle_t handle, const Options &options) {
  const int n = options.check_size;
  const size_t elements = static_cast<size_t>(n) * n;
  // column-major, as cuBLAS reads them: A(i, k) = a[i + k n]
  std::vector<uint16_t> a(elements), b(elements);
  std::vector<int64_t> a_col_sum(n, 0), b_row_sum(n, 0);  // sum_i A(i, k), sum_j B(k, j)
  std::vector<int8_t> a_int(elements), b_int(elements);
  for (size_t i = 0; i < elements; ++i) {
    a_int[i] = static_cast<int8_t>(trit(0, i));
    b_int[i] = static_cast<int8_t>(trit(1, i));
    a[i] = bf16_bits(static_cast<float>(a_int[i]));
    b[i] = bf16_bits(static_cast<float>(b_int[i]));
    a_col_sum[i / n] += a_int[i];  // column k = i / n of A
    b_row_sum[i % n] += b_int[i];  // row k = i % n of B
  }
  void *a_dev, *b_dev;
  float *c_dev;
  CHECK(cudaMalloc(&a_dev, elements * 2));
  CHECK(cudaMalloc(&b_dev, elements * 2));
  CHECK(cudaMalloc(&c_dev, elements * sizeof(float)));
  CHECK(cudaMemcpy(a_dev, a.data(), elements * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b_dev, b.data(), elements * 2, cudaMemcpyHostToDevice));
  const float alpha = 1.0f, beta = 0.0f;
  CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a_dev, CUDA_R_16BF, n, b_dev, CUDA_R_16BF,
                     n, &beta, c_dev, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  std::vector<float> c(elements);
  CHECK(cudaMemcpy(c.data(), c_dev, elements * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(a_dev));
  CHECK(cudaFree(b_dev));
  CHECK(cudaFree(c_dev));

  // expected row sums: sum_j C(i, j) = sum_k A(i, k) b_row_sum[k]; column sums: sum_k a_col_sum[k] B(k, j)
  std::vector<int64_t> row_expected(n, 0), col_expected(n, 0), row_got(n, 0), col_got(n, 0);
  for (size_t idx = 0; idx < elements; ++idx) {
    const size_t i = idx % n, k = idx / n;  // A(i, k)
    row_expected[i] += a_int[idx] * b_row_sum[k];
  }
  for (size_t idx = 0; idx < elements; ++idx) {
    const size_t k = idx % n, j = idx / n;  // B(k, j)
    col_expected[j] += a_col_sum[k] * b_int[idx];
  }
  Answer answer;
  long not_integer = 0;
  for (size_t idx = 0; idx < elements; ++idx) {
    const float value = c[idx];
    const double rounded = std::nearbyint(static_cast<double>(value));
    if (!(rounded == value)) ++not_integer;  // NaN, infinity or a fraction: no integer product gives one
    const int64_t v = std::isfinite(value) ? static_cast<int64_t>(rounded) : INT64_MIN / 4;
    row_got[idx % n] += v;
    col_got[idx / n] += v;
    answer.checksum += splitmix64((static_cast<uint64_t>(idx) << 32) | static_cast<uint32_t>(static_cast<int32_t>(v)));
  }
  for (int i = 0; i < n; ++i) {
    answer.bad_rows += row_got[i] != row_expected[i];
    answer.bad_cols += col_got[i] != col_expected[i];
  }
  if (not_integer > 0 && answer.bad_rows == 0) answer.bad_rows = -1;  // cannot happen unless sums cancel: say so
  return answer;
}

int positive(const char *text, const char *option) {
  char *end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value <= 0 || value > 1 << 20) fail(std::string(option) + ": a positive number");
  return static_cast<int>(value);
}

}  // namespace

int main(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) fail("usage: clusterforge-gpu-perf [--device N] [--gemm-size N] [--gemm-seconds S] "
                            "[--check-size N] [--copy-mib M]");
    const char *value = argv[++i];
    if (arg == "--device") {
      char *end = nullptr;
      device_index = static_cast<int>(std::strtol(value, &end, 10));
      if (end == value || *end != '\0' || device_index < 0) fail("--device: a GPU index");
    } else if (arg == "--gemm-size") {
      options.gemm_size = positive(value, "--gemm-size");
    } else if (arg == "--gemm-seconds") {
      options.gemm_seconds = std::atof(value);
      if (!(options.gemm_seconds >= 0.0 && options.gemm_seconds <= 600.0)) fail("--gemm-seconds: 0 to 600");
    } else if (arg == "--check-size") {
      options.check_size = positive(value, "--check-size");
      if (options.check_size > 1 << 14) fail("--check-size: at most 16384 (exact sums need N <= 2^24)");
    } else if (arg == "--copy-mib") {
      options.copy_mib = positive(value, "--copy-mib");
    } else {
      fail("unknown option " + arg);
    }
  }
  const double started = now();
  CHECK(cudaSetDevice(device_index));
  cudaDeviceProp properties;
  CHECK(cudaGetDeviceProperties(&properties, device_index));
  cublasHandle_t handle;
  CHECK(cublasCreate(&handle));
  const Answer answer = known_answer(handle, options);
  const double tflops = gemm_tflops(handle, options);
  const double gbps = hbm_gbps(options);
  CHECK(cublasDestroy(handle));
  std::string name;
  for (const char *p = properties.name; *p; ++p) {
    if (*p == '"' || *p == '\\') name += '\\';
    if (static_cast<unsigned char>(*p) >= 0x20) name += *p;
  }
  std::printf("{\"index\":%d,\"name\":\"%s\",\"gemm_tflops\":%.1f,\"hbm_gbps\":%.1f,\"checksum\":\"%016llx\","
              "\"checksum_ok\":%s,\"bad_rows\":%ld,\"bad_cols\":%ld,\"seconds\":%.2f}\n",
              device_index, name.c_str(), tflops, gbps, static_cast<unsigned long long>(answer.checksum),
              answer.bad_rows == 0 && answer.bad_cols == 0 ? "true" : "false", answer.bad_rows, answer.bad_cols,
              now() - started);
  return 0;
}
