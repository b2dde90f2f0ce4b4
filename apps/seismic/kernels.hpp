// The per-cell updates of the velocity-stress staggered grid (Virieux, 2nd order) with the
// unsplit convolutional PML, in the order of operations of the 3-D SEISMIC_CPML code. Written
// once for the CPU loops (device_host.cpp) and the CUDA kernels (device_cuda.cu): both call
// these functions per cell, so every cell is computed by the same expression everywhere.
//
// Indices are global and 0-based: i along x (never split, fastest in memory), j along y, k
// along z. A rank's arrays hold its cells plus one halo layer on each side in y and z:
// local index ((k - k0 + 1) * (nyl + 2) + (j - j0 + 1)) * nx + i.
#pragma once

#include <cstddef>

#ifdef __CUDACC__
#define SEIS_HD __host__ __device__ __forceinline__
#else
#define SEIS_HD inline
#endif

namespace seismic {

// Arrays of a rank's slab, all of the same size (cells plus halos), in one allocation.
enum field : int {
    VX, VY, VZ, SXX, SYY, SZZ, SXY, SXZ, SYZ,  // the wave fields (exchanged)
    // C-PML memory variables of the stress update...
    M_DVXDX, M_DVYDY, M_DVZDZ, M_DVYDX, M_DVXDY, M_DVZDX, M_DVXDZ, M_DVZDY, M_DVYDZ,
    // ... and of the velocity update
    M_DSXXDX, M_DSXYDY, M_DSXZDZ, M_DSXYDX, M_DSYYDY, M_DSYZDZ, M_DSXZDX, M_DSYZDY, M_DSZZDZ,
    LAM, MU, RHO,  // the medium, per cell
    NFIELDS
};
constexpr int k_wave_fields = 9;

// C-PML profile of one axis: a, b and K at the grid points and at the half points (+1/2).
enum profile : int { P_A, P_B, P_K, P_AH, P_BH, P_KH, NPROFILES };

// What a kernel needs: the slab's arrays, its place in the grid and the profiles. Plain data,
// passed by value to CUDA kernels.
struct view {
    float *f[NFIELDS];
    const float *px, *py, *pz;  // NPROFILES arrays of nx (ny, nz) floats each, one after another
    int nx, ny, nz;             // global grid
    int j0, k0, nyl, nzl;       // this rank's cells: j in [j0, j0 + nyl), k in [k0, k0 + nzl)
    float dt, idx, idy, idz;    // time step and 1 / grid spacing
    SEIS_HD size_t at(int i, int j, int k) const {
        return (static_cast<size_t>(k - k0 + 1) * (nyl + 2) + static_cast<size_t>(j - j0 + 1)) * nx + i;
    }
    SEIS_HD size_t sy() const { return static_cast<size_t>(nx); }
    SEIS_HD size_t sz() const { return static_cast<size_t>(nx) * (nyl + 2); }
    SEIS_HD float prof(const float *p, int n, int which, int i) const { return p[which * n + i]; }
};

// Stress update of cell (i, j, k) from the velocities (which must be current in the halos).
SEIS_HD void stress_cell(const view &v, int i, int j, int k) {
    const size_t c = v.at(i, j, k), sy = v.sy(), sz = v.sz();
    const float *vx = v.f[VX], *vy = v.f[VY], *vz = v.f[VZ];
    const float lam = v.f[LAM][c], mu = v.f[MU][c], lp2m = lam + 2.0f * mu;
    const int nx = v.nx, ny = v.ny, nz = v.nz;
    if (i <= nx - 2 && j >= 1 && k >= 1) {  // sigma_xx, sigma_yy, sigma_zz
        float dvx_dx = (vx[c + 1] - vx[c]) * v.idx;
        float dvy_dy = (vy[c] - vy[c - sy]) * v.idy;
        float dvz_dz = (vz[c] - vz[c - sz]) * v.idz;
        float &m1 = v.f[M_DVXDX][c], &m2 = v.f[M_DVYDY][c], &m3 = v.f[M_DVZDZ][c];
        m1 = v.prof(v.px, nx, P_BH, i) * m1 + v.prof(v.px, nx, P_AH, i) * dvx_dx;
        m2 = v.prof(v.py, ny, P_B, j) * m2 + v.prof(v.py, ny, P_A, j) * dvy_dy;
        m3 = v.prof(v.pz, nz, P_B, k) * m3 + v.prof(v.pz, nz, P_A, k) * dvz_dz;
        dvx_dx = dvx_dx / v.prof(v.px, nx, P_KH, i) + m1;
        dvy_dy = dvy_dy / v.prof(v.py, ny, P_K, j) + m2;
        dvz_dz = dvz_dz / v.prof(v.pz, nz, P_K, k) + m3;
        v.f[SXX][c] += (lp2m * dvx_dx + lam * (dvy_dy + dvz_dz)) * v.dt;
        v.f[SYY][c] += (lam * (dvx_dx + dvz_dz) + lp2m * dvy_dy) * v.dt;
        v.f[SZZ][c] += (lam * (dvx_dx + dvy_dy) + lp2m * dvz_dz) * v.dt;
    }
    if (i >= 1 && j <= ny - 2) {  // sigma_xy
        float dvy_dx = (vy[c] - vy[c - 1]) * v.idx;
        float dvx_dy = (vx[c + sy] - vx[c]) * v.idy;
        float &m1 = v.f[M_DVYDX][c], &m2 = v.f[M_DVXDY][c];
        m1 = v.prof(v.px, nx, P_B, i) * m1 + v.prof(v.px, nx, P_A, i) * dvy_dx;
        m2 = v.prof(v.py, ny, P_BH, j) * m2 + v.prof(v.py, ny, P_AH, j) * dvx_dy;
        dvy_dx = dvy_dx / v.prof(v.px, nx, P_K, i) + m1;
        dvx_dy = dvx_dy / v.prof(v.py, ny, P_KH, j) + m2;
        v.f[SXY][c] += mu * (dvy_dx + dvx_dy) * v.dt;
    }
    if (i >= 1 && k <= nz - 2) {  // sigma_xz
        float dvz_dx = (vz[c] - vz[c - 1]) * v.idx;
        float dvx_dz = (vx[c + sz] - vx[c]) * v.idz;
        float &m1 = v.f[M_DVZDX][c], &m2 = v.f[M_DVXDZ][c];
        m1 = v.prof(v.px, nx, P_B, i) * m1 + v.prof(v.px, nx, P_A, i) * dvz_dx;
        m2 = v.prof(v.pz, nz, P_BH, k) * m2 + v.prof(v.pz, nz, P_AH, k) * dvx_dz;
        dvz_dx = dvz_dx / v.prof(v.px, nx, P_K, i) + m1;
        dvx_dz = dvx_dz / v.prof(v.pz, nz, P_KH, k) + m2;
        v.f[SXZ][c] += mu * (dvz_dx + dvx_dz) * v.dt;
    }
    if (j <= ny - 2 && k <= nz - 2) {  // sigma_yz
        float dvz_dy = (vz[c + sy] - vz[c]) * v.idy;
        float dvy_dz = (vy[c + sz] - vy[c]) * v.idz;
        float &m1 = v.f[M_DVZDY][c], &m2 = v.f[M_DVYDZ][c];
        m1 = v.prof(v.py, ny, P_BH, j) * m1 + v.prof(v.py, ny, P_AH, j) * dvz_dy;
        m2 = v.prof(v.pz, nz, P_BH, k) * m2 + v.prof(v.pz, nz, P_AH, k) * dvy_dz;
        dvz_dy = dvz_dy / v.prof(v.py, ny, P_KH, j) + m1;
        dvy_dz = dvy_dz / v.prof(v.pz, nz, P_KH, k) + m2;
        v.f[SYZ][c] += mu * (dvz_dy + dvy_dz) * v.dt;
    }
}

// Velocity update of cell (i, j, k) from the stresses (current in the halos), then the
// reference's Dirichlet condition (zero velocity) on the outer faces of the grid.
SEIS_HD void velocity_cell(const view &v, int i, int j, int k) {
    const size_t c = v.at(i, j, k), sy = v.sy(), sz = v.sz();
    const float *sxx = v.f[SXX], *syy = v.f[SYY], *szz = v.f[SZZ];
    const float *sxy = v.f[SXY], *sxz = v.f[SXZ], *syz = v.f[SYZ];
    const float rho = v.f[RHO][c];
    const int nx = v.nx, ny = v.ny, nz = v.nz;
    if (i >= 1 && j >= 1 && k >= 1) {  // v_x
        float d1 = (sxx[c] - sxx[c - 1]) * v.idx;
        float d2 = (sxy[c] - sxy[c - sy]) * v.idy;
        float d3 = (sxz[c] - sxz[c - sz]) * v.idz;
        float &m1 = v.f[M_DSXXDX][c], &m2 = v.f[M_DSXYDY][c], &m3 = v.f[M_DSXZDZ][c];
        m1 = v.prof(v.px, nx, P_B, i) * m1 + v.prof(v.px, nx, P_A, i) * d1;
        m2 = v.prof(v.py, ny, P_B, j) * m2 + v.prof(v.py, ny, P_A, j) * d2;
        m3 = v.prof(v.pz, nz, P_B, k) * m3 + v.prof(v.pz, nz, P_A, k) * d3;
        d1 = d1 / v.prof(v.px, nx, P_K, i) + m1;
        d2 = d2 / v.prof(v.py, ny, P_K, j) + m2;
        d3 = d3 / v.prof(v.pz, nz, P_K, k) + m3;
        v.f[VX][c] += (d1 + d2 + d3) * v.dt / rho;
    }
    if (i <= nx - 2 && j <= ny - 2 && k >= 1) {  // v_y
        float d1 = (sxy[c + 1] - sxy[c]) * v.idx;
        float d2 = (syy[c + sy] - syy[c]) * v.idy;
        float d3 = (syz[c] - syz[c - sz]) * v.idz;
        float &m1 = v.f[M_DSXYDX][c], &m2 = v.f[M_DSYYDY][c], &m3 = v.f[M_DSYZDZ][c];
        m1 = v.prof(v.px, nx, P_BH, i) * m1 + v.prof(v.px, nx, P_AH, i) * d1;
        m2 = v.prof(v.py, ny, P_BH, j) * m2 + v.prof(v.py, ny, P_AH, j) * d2;
        m3 = v.prof(v.pz, nz, P_B, k) * m3 + v.prof(v.pz, nz, P_A, k) * d3;
        d1 = d1 / v.prof(v.px, nx, P_KH, i) + m1;
        d2 = d2 / v.prof(v.py, ny, P_KH, j) + m2;
        d3 = d3 / v.prof(v.pz, nz, P_K, k) + m3;
        v.f[VY][c] += (d1 + d2 + d3) * v.dt / rho;
    }
    if (i <= nx - 2 && j >= 1 && k <= nz - 2) {  // v_z
        float d1 = (sxz[c + 1] - sxz[c]) * v.idx;
        float d2 = (syz[c] - syz[c - sy]) * v.idy;
        float d3 = (szz[c + sz] - szz[c]) * v.idz;
        float &m1 = v.f[M_DSXZDX][c], &m2 = v.f[M_DSYZDY][c], &m3 = v.f[M_DSZZDZ][c];
        m1 = v.prof(v.px, nx, P_BH, i) * m1 + v.prof(v.px, nx, P_AH, i) * d1;
        m2 = v.prof(v.py, ny, P_B, j) * m2 + v.prof(v.py, ny, P_A, j) * d2;
        m3 = v.prof(v.pz, nz, P_BH, k) * m3 + v.prof(v.pz, nz, P_AH, k) * d3;
        d1 = d1 / v.prof(v.px, nx, P_KH, i) + m1;
        d2 = d2 / v.prof(v.py, ny, P_K, j) + m2;
        d3 = d3 / v.prof(v.pz, nz, P_KH, k) + m3;
        v.f[VZ][c] += (d1 + d2 + d3) * v.dt / rho;
    }
    if (i == 0 || i == nx - 1 || j == 0 || j == ny - 1 || k == 0 || k == nz - 1)
        v.f[VX][c] = v.f[VY][c] = v.f[VZ][c] = 0.0f;
}

// Energy of cell c: kinetic 0.5 rho |v|^2 plus strain energy 0.5 sigma:epsilon, the strain
// from the stress by the isotropic compliance (the components' staggered positions ignored,
// as in the reference's energy).
SEIS_HD double cell_energy(const view &v, size_t c) {
    const double lam = v.f[LAM][c], mu = v.f[MU][c], rho = v.f[RHO][c];
    const double vx = v.f[VX][c], vy = v.f[VY][c], vz = v.f[VZ][c];
    const double sxx = v.f[SXX][c], syy = v.f[SYY][c], szz = v.f[SZZ][c];
    const double sxy = v.f[SXY][c], sxz = v.f[SXZ][c], syz = v.f[SYZ][c];
    const double young = mu * (3.0 * lam + 2.0 * mu) / (lam + mu), nu = lam / (2.0 * (lam + mu));
    const double exx = (sxx - nu * (syy + szz)) / young, eyy = (syy - nu * (sxx + szz)) / young,
                 ezz = (szz - nu * (sxx + syy)) / young;
    const double kin = 0.5 * rho * (vx * vx + vy * vy + vz * vz);
    const double pot = 0.5 * (exx * sxx + eyy * syy + ezz * szz) + (sxy * sxy + sxz * sxz + syz * syz) / (2.0 * mu);
    return kin + pot;
}

}  // namespace seismic
