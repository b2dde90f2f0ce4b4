// nas-ft's driver: the arrays in hgas memory, the forward and inverse transposes in the two
// variants, the timed iterations. README.md ("Design") describes the data flow.
#include "ft_run.hpp"

#include <fftw3.h>
#include <hgas/hgas.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>

#include "backend.hpp"
#include "util.hpp"

namespace ft {
namespace {

using nas::check;

constexpr size_t kC = sizeof(cplx);

hgas_kind_t hgas_kind_of(kind k) {
    return k == kind::host ? HGAS_KIND_HOST : k == kind::cuda ? HGAS_KIND_CUDA : HGAS_KIND_SIM;
}

// Signal words (host memory, symmetric): arrivals counted since the start, never reset, so a
// wait compares with a running total and no reset can race with an early put.
enum { sig_fwd = 0, sig_inv = 1, sig_exch = 2, sig_words = 8 };

class ft_runner {
public:
    ft_runner(const options &o, int threads)
        : o_(o), l_(o.prob.nx, o.prob.ny, o.prob.nz, hgas_rank_n(), hgas_rank_me()), hk_(hgas_kind_of(o.mem)) {
        allocate();
        if (o.mem == kind::cuda) {
            std::string why;
            be_ = make_cuda_backend(l_, a_, &why);
            if (!be_) nas::die("nas-ft: --kind cuda: " + why);
        } else {
            be_ = make_cpu_backend(l_, a_, threads, o.measure);
        }
        // Plane groups and row chunks: about 8 per transpose, so that puts of one overlap the
        // transforms of the next, and at least one plane per FFTW thread.
        const int parts = 8;
        group_ = std::max((l_.my_zc() + parts - 1) / parts, o.mem == kind::cuda ? 1 : be_->threads());
        group_ = std::min(group_, l_.my_zc());
        chunk_ = std::max(1, (l_.my_yc() + parts - 1) / parts);
        be_->plan(a_, group_, chunk_);
    }

    ~ft_runner() {
        be_.reset();
        for (void *p : sym_) hgas_free(p);
        for (void *p : host_) fftw_free(p);
    }

    run_result run() {
        run_result r;
        r.threads = be_->threads();
        r.backend = be_->name();
        // Warm-up, as NPB does: one initial field and forward transform, untimed.
        be_->init_field(o_.perturb);
        forward();
        ph_ = phases();
        fft_s_ = 0;
        be_->device_fft_seconds(true);
        check(hgas_barrier(), "hgas_barrier");
        const double t0 = nas::now(), c0 = nas::cpu_seconds();
        timed(&ph_.compute, [&] { be_->init_field(o_.perturb); });
        forward();
        for (int it = 0; it < o_.prob.niter; ++it) {
            inverse();
            r.sums.push_back(checksum());
        }
        be_->sync();
        const double t1 = nas::now();
        r.cpu_seconds = nas::cpu_seconds() - c0;
        double el = t1 - t0;
        check(hgas_allreduce(&r.seconds, &el, 1, HGAS_DOUBLE, HGAS_OP_MAX), "hgas_allreduce");
        r.ph = ph_;
        const double dev_fft = be_->device_fft_seconds(false);
        r.fft_seconds = dev_fft >= 0 ? dev_fft : fft_s_;  // GPU: the transforms' own time
        // The cuFFT peer on rank 0 alone (ranks sharing a GPU would disturb it).
        if (o_.mem == kind::cuda && o_.cufft_peer && l_.me == 0) r.peer_3d_seconds = be_->library_3d_seconds(5);
        return r;
    }

private:
    template <class F>
    void timed(double *acc, F &&f) {
        nas::phase_timer t(acc);
        f();
    }

    void *sym(size_t bytes, hgas_kind_t k) {
        void *p = nullptr;
        check(hgas_malloc_kind(bytes, k, &p), "hgas_malloc_kind (nas-ft's arrays; see README.md, \"Memory\")");
        sym_.push_back(p);
        return p;
    }
    cplx *host_array(size_t elems) {
        void *p = fftw_malloc(elems * kC);
        if (!p) nas::die("nas-ft: out of host memory for " + std::to_string(elems * kC) + " bytes");
        host_.push_back(p);
        return static_cast<cplx *>(p);
    }

    // Slabs from device memory (kinds cuda and sim) with more than one rank: each plane group's
    // rows for a peer are first copied into that peer's block of a.send (on the GPU, one strided
    // copy on the stream), then go as one put per peer per group, not one per plane: every put
    // from GPU memory is a copy the CPU waits for. Host memory puts plane by plane (the copy
    // would cost as much as the put).
    bool batched() const { return o_.var == variant::slabs && o_.mem != kind::host && l_.n > 1; }

    // host and cuda: the arrays are the landing buffers themselves. sim: landing buffers in sim
    // memory (reachable only through hgas), the arrays on the host, fetched after each transpose.
    void allocate() {
        const bool packed = o_.var == variant::packed;
        const size_t nb = size_t(l_.n) * l_.block_elems();
        sig_ = static_cast<uint64_t *>(sym(sig_words * sizeof(uint64_t), HGAS_KIND_HOST));
        std::memset(sig_, 0, sig_words * sizeof(uint64_t));
        land_fwd_ = sym(l_.pencil_elems() * kC, hk_);
        land_inv_ = sym(l_.slab_elems() * kC, hk_);
        if (packed) land_recv_ = sym(nb * kC, hk_);
        if (o_.mem == kind::sim) {
            a_.pencil = host_array(l_.pencil_elems());
            a_.slab = host_array(l_.slab_elems());
            a_.work = host_array(l_.pencil_elems());
            if (packed || batched()) a_.send = host_array(nb);
        } else {
            a_.pencil = static_cast<cplx *>(land_fwd_);
            a_.slab = static_cast<cplx *>(land_inv_);
            a_.work = static_cast<cplx *>(sym(l_.pencil_elems() * kC, hk_));
            if (packed || batched()) a_.send = static_cast<cplx *>(sym(nb * kC, hk_));
        }
        check(hgas_barrier(), "hgas_barrier");  // every rank's signal words are zero
    }

    hgas_gptr_t at(void *symbuf, int rank, size_t elem_offset) {
        hgas_gptr_t g;
        check(hgas_ptr(symbuf, rank, &g), "hgas_ptr");
        return hgas_gptr_add(g, int64_t(elem_offset * kC));
    }
    hgas_gptr_t sig_at(int rank, int word) {
        hgas_gptr_t g;
        check(hgas_ptr(sig_, rank, &g), "hgas_ptr");
        return hgas_gptr_add(g, int64_t(word * sizeof(uint64_t)));
    }
    void put(hgas_gptr_t dst, const cplx *src, size_t elems, int rank, int word, uint64_t add) {
        nas::phase_timer t(&ph_.comm);
        check(hgas_put_signal_nbi(dst, src, elems * kC, sig_at(rank, word), add, HGAS_SIGNAL_ADD),
              "hgas_put_signal_nbi (transpose)");
    }
    void wait_signal(int word, uint64_t total) {
        if (l_.n == 1) return;  // one rank: every share was a local copy
        nas::phase_timer t(&ph_.wait);
        check(hgas_quiet(), "hgas_quiet");
        check(hgas_signal_wait_until(&sig_[word], HGAS_CMP_GE, total, nullptr),
              "hgas_signal_wait_until (waiting for the transpose's data)");
    }
    // This rank's own share of a Slabs transpose: a local strided copy (kind sim: between the
    // host arrays, which the fetch afterwards leaves alone).
    void self_copy(cplx *dst, size_t dpitch, const cplx *src, size_t spitch, size_t width, size_t rows) {
        if (rows == 0 || width == 0) return;
        nas::phase_timer t(&ph_.pack);
        be_->copy2d(dst, dpitch, src, spitch, width, rows);
    }
    // sim: the landing buffer's rows into the host array.
    void fetch(cplx *dst, size_t dpitch, void *land, size_t src_off, size_t spitch, size_t width, size_t rows) {
        if (width == 0 || rows == 0) return;
        nas::phase_timer t(&ph_.pack);
        if (dpitch == width && spitch == width) {
            check(hgas_get(dst, at(land, l_.me, src_off), width * rows * kC), "hgas_get (sim landing buffer)");
            return;
        }
        for (size_t r = 0; r < rows; ++r)
            check(hgas_get(dst + r * dpitch, at(land, l_.me, src_off + r * spitch), width * kC),
                  "hgas_get (sim landing buffer)");
    }
    void xy(int za, int zb, int dir) {
        nas::phase_timer t(&ph_.compute), f(&fft_s_);
        be_->fft_xy(za, zb, dir);
    }

    // Slab -> pencil: x-y transforms, then plane blocks to their owners; z transforms.
    void forward() {
        const int zc = l_.my_zc(), z0 = l_.z0[l_.me], nx = l_.nx, ny = l_.ny;
        ++fwd_epoch_;
        if (o_.var == variant::slabs) {
            // Pipelined: group g+1 is queued before group g's puts (the GPU computes meanwhile).
            std::vector<int> marks;
            const int ngroups = (zc + group_ - 1) / group_;
            auto queue = [&](int g) {
                const int za = g * group_, zb = std::min(zc, (g + 1) * group_);
                xy(za, zb, -1);
                if (batched()) {  // each peer's rows of the group into its block of a.send
                    nas::phase_timer t(&ph_.pack);
                    for (int d = 0; d < l_.n; ++d)
                        if (d != l_.me) {
                            const size_t w = size_t(l_.yc[d]) * nx;
                            be_->copy2d(a_.send + d * l_.block_elems() + size_t(za) * w, w,
                                        a_.slab + (size_t(za) * ny + l_.y0[d]) * nx, size_t(ny) * nx, w, zb - za);
                        }
                }
                marks.push_back(be_->mark());
            };
            queue(0);
            for (int g = 0; g < ngroups; ++g) {
                if (g + 1 < ngroups) queue(g + 1);
                {
                    nas::phase_timer t(&ph_.compute);
                    be_->wait_mark(marks[g]);
                }
                const int za = g * group_, zb = std::min(zc, (g + 1) * group_);
                // My own rows: one strided copy of the group (on the GPU, queued on the stream),
                // not a put per plane that the CPU would wait for.
                self_copy(a_.pencil + size_t(z0 + za) * l_.my_yc() * nx, size_t(l_.my_yc()) * nx,
                          a_.slab + (size_t(za) * ny + l_.y0[l_.me]) * nx, size_t(ny) * nx,
                          size_t(l_.my_yc()) * nx, zb - za);
                if (batched()) {  // the group's rows were staged per peer in queue()
                    const size_t B = l_.block_elems();
                    for (int k = 1; k < l_.n; ++k) {
                        const int d = (l_.me + k) % l_.n;
                        const size_t w = size_t(l_.yc[d]) * nx;
                        put(at(land_fwd_, d, size_t(z0 + za) * w), a_.send + d * B + size_t(za) * w, (zb - za) * w, d,
                            sig_fwd, uint64_t(zb - za));
                    }
                    continue;
                }
                for (int k = 1; k < l_.n; ++k) {
                    const int d = (l_.me + k) % l_.n;  // start with the next rank: spread the load
                    for (int zl = za; zl < zb; ++zl)
                        put(at(land_fwd_, d, size_t(z0 + zl) * l_.yc[d] * nx),
                            a_.slab + (size_t(zl) * ny + l_.y0[d]) * nx, size_t(l_.yc[d]) * nx, d, sig_fwd, 1);
                }
            }
            wait_signal(sig_fwd, uint64_t(fwd_epoch_) * (l_.nz - zc));
            if (o_.mem == kind::sim) {  // the other ranks' planes (mine were copied on the host)
                const size_t pl = size_t(l_.my_yc()) * nx;
                fetch(a_.pencil, 0, land_fwd_, 0, 0, size_t(z0) * pl, 1);
                fetch(a_.pencil + size_t(z0 + zc) * pl, 0, land_fwd_, size_t(z0 + zc) * pl, 0,
                      size_t(l_.nz - z0 - zc) * pl, 1);
            }
        } else {
            xy(0, zc, -1);
            const size_t B = l_.block_elems();
            {
                nas::phase_timer t(&ph_.pack);
                be_->sync();
                for (int d = 0; d < l_.n; ++d)
                    be_->copy2d(a_.send + d * B, size_t(l_.yc[d]) * nx, a_.slab + size_t(l_.y0[d]) * nx,
                                size_t(ny) * nx, size_t(l_.yc[d]) * nx, zc);
                be_->sync();
            }
            exchange([&](int d) { return size_t(zc) * l_.yc[d] * nx; });
            // Block s holds planes z0_s.. of my rows: contiguous in the pencil.
            for (int s = 0; s < l_.n; ++s) {
                const size_t count = size_t(l_.zc[s]) * l_.my_yc() * nx;
                if (o_.mem == kind::sim)
                    fetch(a_.pencil + size_t(l_.z0[s]) * l_.my_yc() * nx, count, land_recv_, s * B, count, count, 1);
                else {
                    nas::phase_timer t(&ph_.pack);
                    be_->copy2d(a_.pencil + size_t(l_.z0[s]) * l_.my_yc() * nx, count,
                                static_cast<cplx *>(land_recv_) + s * B, count, count, 1);
                }
            }
        }
        {
            nas::phase_timer t(&ph_.compute), f(&fft_s_);
            be_->fft_z_forward(0, l_.my_yc());
            be_->sync();
        }
        // Nobody may write into a rank's slab (the inverse transpose) or its packed buffers
        // while that rank still reads them for this transpose: all ranks pass here first.
        nas::phase_timer t(&ph_.wait);
        check(hgas_barrier(), "hgas_barrier");
    }

    // Packed Slabs' all-to-all of the send blocks into land_recv: hgas_alltoall for host memory
    // (blocks of block_elems()); for sim and cuda memory, which hgas_alltoall does not take, one
    // put-with-signal per destination of its block's true size.
    template <class Size>
    void exchange(Size size_for) {
        const size_t B = l_.block_elems();
        if (o_.mem == kind::host) {
            nas::phase_timer t(&ph_.comm);
            check(hgas_alltoall(land_recv_, a_.send, B * kC), "hgas_alltoall (transpose)");
            return;
        }
        ++exch_epoch_;
        for (int k = 1; k <= l_.n; ++k) {
            const int d = (l_.me + k) % l_.n;
            put(at(land_recv_, d, size_t(l_.me) * B), a_.send + d * B, size_for(d), d, sig_exch, 1);
        }
        wait_signal(sig_exch, uint64_t(exch_epoch_) * l_.n);
    }

    // Pencil -> slab: evolve and inverse z transforms (row chunks), rows to the planes' owners;
    // x-y transforms.
    void inverse() {
        const int yc = l_.my_yc(), y0 = l_.y0[l_.me], zc = l_.my_zc(), nx = l_.nx, ny = l_.ny;
        ++inv_epoch_;
        if (o_.var == variant::slabs) {
            std::vector<int> marks;
            const int nchunks = (yc + chunk_ - 1) / chunk_;
            auto queue = [&](int c) {
                nas::phase_timer t(&ph_.compute), f(&fft_s_);
                be_->evolve_inverse_z(c * chunk_, std::min(yc, (c + 1) * chunk_));
                marks.push_back(be_->mark());
            };
            queue(0);
            for (int c = 0; c < nchunks; ++c) {
                if (c + 1 < nchunks) queue(c + 1);
                {
                    nas::phase_timer t(&ph_.compute);
                    be_->wait_mark(marks[c]);
                }
                const int ya = c * chunk_, rows = std::min(yc, (c + 1) * chunk_) - ya;
                self_copy(a_.slab + (size_t(y0) + ya) * nx, size_t(ny) * nx,
                          a_.work + (size_t(l_.z0[l_.me]) * yc + ya) * nx, size_t(yc) * nx, size_t(rows) * nx, zc);
                for (int k = 1; k < l_.n; ++k) {
                    const int d = (l_.me + k) % l_.n;
                    for (int z = l_.z0[d]; z < l_.z0[d] + l_.zc[d]; ++z)
                        put(at(land_inv_, d, (size_t(z - l_.z0[d]) * ny + y0 + ya) * nx),
                            a_.work + (size_t(z) * yc + ya) * nx, size_t(rows) * nx, d, sig_inv, uint64_t(rows));
                }
            }
            wait_signal(sig_inv, uint64_t(inv_epoch_) * zc * (ny - yc));
            if (o_.mem == kind::sim) {  // the other ranks' rows of each plane
                fetch(a_.slab, size_t(ny) * nx, land_inv_, 0, size_t(ny) * nx, size_t(y0) * nx, zc);
                fetch(a_.slab + size_t(y0 + yc) * nx, size_t(ny) * nx, land_inv_, size_t(y0 + yc) * nx,
                      size_t(ny) * nx, size_t(ny - y0 - yc) * nx, zc);
            }
        } else {
            {
                nas::phase_timer t(&ph_.compute), f(&fft_s_);
                be_->evolve_inverse_z(0, yc);
            }
            const size_t B = l_.block_elems();
            {
                nas::phase_timer t(&ph_.pack);
                be_->sync();
                for (int d = 0; d < l_.n; ++d) {
                    const size_t count = size_t(l_.zc[d]) * yc * nx;
                    be_->copy2d(a_.send + d * B, count, a_.work + size_t(l_.z0[d]) * yc * nx, count, count, 1);
                }
                be_->sync();
            }
            exchange([&](int d) { return size_t(l_.zc[d]) * yc * nx; });
            for (int s = 0; s < l_.n; ++s) {
                const size_t w = size_t(l_.yc[s]) * nx;
                if (o_.mem == kind::sim)
                    fetch(a_.slab + size_t(l_.y0[s]) * nx, size_t(ny) * nx, land_recv_, s * B, w, w, zc);
                else {
                    nas::phase_timer t(&ph_.pack);
                    be_->copy2d(a_.slab + size_t(l_.y0[s]) * nx, size_t(ny) * nx,
                                static_cast<cplx *>(land_recv_) + s * B, w, w, zc);
                }
            }
        }
        xy(0, zc, 1);
    }

    cplx checksum() {
        cplx c;
        {
            nas::phase_timer t(&ph_.compute);
            c = be_->checksum();  // waits for the GPU's transforms
        }
        double v[2] = {c.real(), c.imag()}, s[2];
        {
            // The sum also orders iterations: no rank puts the next iteration's rows into a
            // slab whose owner has not yet taken this iteration's checksum from it.
            nas::phase_timer t(&ph_.comm);
            check(hgas_allreduce(s, v, 2, HGAS_DOUBLE, HGAS_OP_SUM), "hgas_allreduce (checksum)");
        }
        const double N = double(l_.nx) * l_.ny * l_.nz;
        return cplx(s[0] / N, s[1] / N);
    }

    const options &o_;
    layout l_;
    hgas_kind_t hk_;
    arrays a_;
    std::unique_ptr<backend> be_;
    uint64_t *sig_ = nullptr;
    void *land_fwd_ = nullptr, *land_inv_ = nullptr, *land_recv_ = nullptr;
    std::vector<void *> sym_, host_;
    int group_ = 1, chunk_ = 1;
    int fwd_epoch_ = 0, inv_epoch_ = 0, exch_epoch_ = 0;
    phases ph_;
    double fft_s_ = 0;
};

}  // namespace

run_result run_ft(const options &o) {
    int threads = o.threads;
    if (threads <= 0) {
        const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
        threads = std::max(1, cores / std::max(1, hgas_local_n()));
    }
    if (o.p2 > 1) return run_ft_2d(o, threads);
    ft_runner r(o, threads);
    return r.run();
}

}  // namespace ft
