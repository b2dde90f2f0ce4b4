# hgas_hide_cxx_runtime(target): a shared library of hgas exports none of the C++ runtime's own
# code when the compiler links that runtime in statically (libstdc++.a, as one GCC 13 toolchain
# does: its libhgas had no NEEDED libstdc++.so). Exported, those copies answer other libraries'
# calls once libhgas is in the global scope: with libhgas loaded RTLD_GLOBAL, CuPy's ml_dtypes
# called libhgas's copy of std::ostream's double insertion and crashed in codecvt::do_length,
# whose locale that copy had never set up. With a shared libstdc++ the option changes nothing.
# tests/unit's runtime_symbols test checks it on a probe library linked with -static-libstdc++.
include(CheckLinkerFlag)
check_linker_flag(CXX "LINKER:--exclude-libs,libstdc++.a" HGAS_HAVE_EXCLUDE_LIBS)

set(HGAS_CXX_RUNTIME_ARCHIVES "libstdc++.a:libsupc++.a:libgcc.a:libgcc_eh.a")

function(hgas_hide_cxx_runtime target)
  if(HGAS_HAVE_EXCLUDE_LIBS)
    target_link_options(${target} PRIVATE "LINKER:--exclude-libs,${HGAS_CXX_RUNTIME_ARCHIVES}")
  endif()
endfunction()
