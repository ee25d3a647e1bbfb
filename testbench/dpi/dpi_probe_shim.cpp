// Hand-written C shim between the Verilated `Vdpi_probe` and its Rust binding dpi_probe.rs
// (the generated shims of rtl/ have the same functions, plus one pointer per port; this one
// looks ports up by name instead).

#include "Vdpi_probe.h"
#include "verilated.h"
#if VM_TRACE_FST
#include "verilated_fst_c.h"
#endif
#include <cstdint>
#include <cstring>

namespace {
struct Model {
  VerilatedContext ctx;
  Vdpi_probe* top;
#if VM_TRACE_FST
  VerilatedFstC* fst = nullptr;
#endif
  // Initial values are drawn while the model is constructed (see the generated shims).
  explicit Model(uint32_t init_seed) {
    if (init_seed != 0) {
      ctx.randReset(2);
      ctx.randSeed(static_cast<int>(init_seed));
    }
    top = new Vdpi_probe{&ctx};
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

void* dpi_probe_new(uint32_t init_seed) { return new Model(init_seed); }

void dpi_probe_eval(void* model) { static_cast<Model*>(model)->top->eval(); }

void dpi_probe_delete(void* model) { delete static_cast<Model*>(model); }

// The storage of port `name` and its width in bits, or null.
void* dpi_probe_port(void* model, const char* name, uint32_t* width) {
  Vdpi_probe* t = static_cast<Model*>(model)->top;
  struct Port { const char* name; void* ptr; uint32_t width; };
  const Port ports[] = {
    {"clk_i", &t->clk_i, 1},     {"rst_ni", &t->rst_ni, 1},   {"rd_i", &t->rd_i, 1},
    {"wr_i", &t->wr_i, 1},       {"addr_i", &t->addr_i, 32},  {"wdata_i", &t->wdata_i, 64},
    {"rvalid_o", &t->rvalid_o, 1}, {"rdata_o", &t->rdata_o, 32}, {"reads_o", &t->reads_o, 32},
  };
  for (const Port& p : ports) {
    if (std::strcmp(p.name, name) == 0) {
      *width = p.width;
      return p.ptr;
    }
  }
  return nullptr;
}

int dpi_probe_trace_open(void* model, const char* path) {
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

void dpi_probe_trace_dump(void* model, uint64_t time) {
#if VM_TRACE_FST
  Model* m = static_cast<Model*>(model);
  if (m->fst) m->fst->dump(time);
#else
  (void)model;
  (void)time;
#endif
}

void dpi_probe_trace_close(void* model) {
#if VM_TRACE_FST
  Model* m = static_cast<Model*>(model);
  if (m->fst) { m->fst->close(); delete m->fst; m->fst = nullptr; }
#else
  (void)model;
#endif
}

}  // extern "C"
