# GP_SONAME(VAR, LIB, LIBS): defines VAR in config.h as the soname of the shared library
# libLIB that the linker takes for LIBS (e.g. "libcapstone.so.4"), for dlopen: a program
# is linked with LIBS and its DT_NEEDED entry for libLIB read back.
AC_DEFUN([GP_SONAME], [
  AC_REQUIRE([AC_PROG_CC])
  AC_CHECK_TOOL([READELF], [readelf])
  AC_MSG_CHECKING([the soname of lib$2])
  gp_soname_save_LIBS=$LIBS
  LIBS="-Wl,--no-as-needed $3 $LIBS"
  gp_soname=
  AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
    [gp_soname=`$READELF -d conftest$EXEEXT 2>/dev/null | grep '(NEEDED)' |
      sed 's/.* //' | tr -d '@<:@@:>@' | grep "^lib$2\.so\." | head -n 1`])
  LIBS=$gp_soname_save_LIBS
  AS_IF([test -z "$gp_soname"],
    [AC_MSG_ERROR([cannot tell the soname of lib$2 (linking with $3)])])
  AC_MSG_RESULT([$gp_soname])
  AC_DEFINE_UNQUOTED([$1], ["$gp_soname"], [soname of lib$2, opened at its first use])
])
