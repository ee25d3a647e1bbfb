// golden test header
//
// C shim between the Verilated `Vskid_buffer_w8` and its Rust binding skid_buffer_w8.rs.
// Build with -DVM_TRACE_FST=1 (and verilate with --trace-fst) for waveforms, with
// -DVM_COVERAGE=1 (and verilate with --coverage-*) for coverage.

#include "Vskid_buffer_w8.h"
#include "verilated.h"
#if VM_TRACE_FST
#include "verilated_fst_c.h"
#endif
#if VM_COVERAGE
#include "Vskid_buffer_w8__Syms.h"
#include "verilated_cov.h"
#include <cstddef>
#include <mutex>
#include <vector>
#endif

namespace {
#if VM_COVERAGE
// A model's coverage counters live in it and die with it: each model adds them here as it is
// deleted, point by point (every model of this top has the same points, in the same order),
// and `_coverage_write` writes the sums through a fresh model's coverage context.
std::mutex cov_mutex;
std::vector<uint64_t> cov_sums;
uint64_t cov_models = 0;
// The counters are `uint32_t` (`std::atomic<uint32_t>` in Verilator 5.006).
template <class Counter>
void cov_add(const Counter* counts, size_t n) {
  std::lock_guard<std::mutex> lock{cov_mutex};
  if (cov_sums.size() < n) cov_sums.resize(n, 0);
  for (size_t i = 0; i < n; ++i) cov_sums[i] += counts[i];
  ++cov_models;
}
#endif
struct Model {
  VerilatedContext ctx;
  Vskid_buffer_w8* top;
#if VM_TRACE_FST
  VerilatedFstC* fst = nullptr;
#endif
  // Verilator draws initial values while it constructs the model, from the context that
  // constructed last on this thread: this one. A seed of 0 keeps them all zero.
  explicit Model(uint32_t init_seed) {
    if (init_seed != 0) {
      ctx.randReset(2);
      ctx.randSeed(static_cast<int>(init_seed));
    }
    top = new Vskid_buffer_w8{&ctx};
  }
  ~Model() {
#if VM_TRACE_FST
    if (fst) { fst->close(); delete fst; }
#endif
    top->final();
#if VM_COVERAGE
    const auto& c = top->rootp->vlSymsp->__Vcoverage;
    cov_add(c, sizeof(c) / sizeof(c[0]));
#endif
    delete top;
  }
};
}  // namespace

extern "C" {

struct skid_buffer_w8_ports {
  CData* clk_i;
  CData* rst_ni;
  CData* s_valid_i;
  CData* s_ready_o;
  CData* s_data_i;
  CData* m_valid_o;
  CData* m_ready_i;
  CData* m_data_o;
};

void* skid_buffer_w8_new(uint32_t init_seed) { return new Model(init_seed); }

void skid_buffer_w8_ports(void* model, skid_buffer_w8_ports* p) {
  Vskid_buffer_w8* t = static_cast<Model*>(model)->top;
  p->clk_i = &t->clk_i;
  p->rst_ni = &t->rst_ni;
  p->s_valid_i = &t->s_valid_i;
  p->s_ready_o = &t->s_ready_o;
  p->s_data_i = &t->s_data_i;
  p->m_valid_o = &t->m_valid_o;
  p->m_ready_i = &t->m_ready_i;
  p->m_data_o = &t->m_data_o;
}

void skid_buffer_w8_eval(void* model) { static_cast<Model*>(model)->top->eval(); }

void skid_buffer_w8_delete(void* model) { delete static_cast<Model*>(model); }

int skid_buffer_w8_trace_open(void* model, const char* path) {
#if VM_TRACE_FST
  Model* m = static_cast<Model*>(model);
  if (m->fst) return 1;
  m->ctx.traceEverOn(true);
  m->fst = new VerilatedFstC;
  m->top->trace(m->fst, 99);
  m->fst->open(path);
  return 1;
#else
  (void)model;
  (void)path;
  return 0;
#endif
}

void skid_buffer_w8_trace_dump(void* model, uint64_t time) {
#if VM_TRACE_FST
  Model* m = static_cast<Model*>(model);
  if (m->fst) m->fst->dump(time);
#else
  (void)model;
  (void)time;
#endif
}

void skid_buffer_w8_trace_close(void* model) {
#if VM_TRACE_FST
  Model* m = static_cast<Model*>(model);
  if (m->fst) { m->fst->close(); delete m->fst; m->fst = nullptr; }
#else
  (void)model;
#endif
}

// Writes the coverage counts of every model of this top deleted so far, summed, to `path`
// (Verilator's coverage.dat format). Returns the number of models summed (0: none, no file
// written), or -1 when the model was not built for coverage.
int64_t skid_buffer_w8_coverage_write(const char* path) {
#if VM_COVERAGE
  std::lock_guard<std::mutex> lock{cov_mutex};
  if (cov_models == 0) return 0;
  VerilatedContext ctx;
  Vskid_buffer_w8 top{&ctx};
  auto& c = top.rootp->vlSymsp->__Vcoverage;
  for (size_t i = 0; i < sizeof(c) / sizeof(c[0]) && i < cov_sums.size(); ++i)
    c[i] = cov_sums[i] > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(cov_sums[i]);
  ctx.coveragep()->write(path);
  return static_cast<int64_t>(cov_models);
#else
  (void)path;
  return -1;
#endif
}

}  // extern "C"
