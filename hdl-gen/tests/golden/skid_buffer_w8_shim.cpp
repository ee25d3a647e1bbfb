// golden test header
//
// C shim between the Verilated `Vskid_buffer_w8` and its Rust binding skid_buffer_w8.rs.
// Build with -DVM_TRACE_FST=1 (and verilate with --trace-fst) for waveforms.

#include "Vskid_buffer_w8.h"
#include "verilated.h"
#if VM_TRACE_FST
#include "verilated_fst_c.h"
#endif

namespace {
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

}  // extern "C"
