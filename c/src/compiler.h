/*
 * compiler.h - the compiler hints every C file of the project uses: the core,
 * the number conversions (which need nothing else from the core) and the
 * Ruby and Python bindings. Not installed.
 */
#ifndef TERSA_COMPILER_H
#define TERSA_COMPILER_H

#if defined(__GNUC__) || defined(__clang__)
/** Branch hints for the hot paths: the error and growth branches are cold. */
#  define TERSA_LIKELY(x) __builtin_expect(!!(x), 1)
#  define TERSA_UNLIKELY(x) __builtin_expect(!!(x), 0)
/** A static helper that must be inlined into its callers. */
#  define TERSA_INLINE static inline __attribute__((always_inline))
/** The attribute alone, for functions declared elsewhere. */
#  define TERSA_ALWAYS_INLINE __attribute__((always_inline))
/** A cold path kept out of its caller's body. */
#  define TERSA_NOINLINE __attribute__((noinline))
/** A cold path defined in a private header: each file that calls it gets its
 *  own static copy, whose clobbers its callers know; the others get none. */
#  define TERSA_NOINLINE_LOCAL static __attribute__((noinline, unused))
/** A function that does not return (raises, in the bindings). */
#  define TERSA_NORETURN(decl) decl __attribute__((noreturn))
#else
#  define TERSA_LIKELY(x) (x)
#  define TERSA_UNLIKELY(x) (x)
#  define TERSA_INLINE static inline
#  define TERSA_ALWAYS_INLINE
#  define TERSA_NOINLINE
#  define TERSA_NOINLINE_LOCAL static
#  define TERSA_NORETURN(decl) decl
#endif

#endif /* TERSA_COMPILER_H */
