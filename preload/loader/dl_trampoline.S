/*
 * dlopen and dlsym as the program sees them.
 *
 * dlopen: a trampoline that tells the loader view
 * about the request, then jumps (not calls) to glibc's dlopen. glibc
 * resolves a bare name against the RUNPATH and $ORIGIN of the object that
 * called dlopen, which it finds from the return address; a jump leaves the
 * caller's return address where glibc looks for it, so what loads is
 * exactly what would load without us (the cuDNN 9 RUNPATH trap of a
 * wrapper that calls dlopen itself). ct_loader_dlopen_request(file, mode,
 * return address) records the request and returns the address to jump to.
 *
 * dlsym: RTLD_DEFAULT and RTLD_NEXT lookups depend on the caller, which
 * glibc finds from the return address, so they jump straight to glibc's
 * dlsym. A lookup in a given library's handle (ctypes, cffi, JIT code
 * reaching the runtime) goes to ct_dlsym_in_handle, which may answer with
 * our hook of the same runtime function (dlsym_handle.c).
 */
#if defined(__x86_64__)
/* Calls `fn` with the trampoline's own arguments (rdi, rsi, rdx), keeps the
 * first two for the function it answers, and jumps there: the caller's
 * return address stays on top of the stack. */
.macro jump_to_answer_of fn
    push %rdi
    .cfi_adjust_cfa_offset 8
    push %rsi
    .cfi_adjust_cfa_offset 8
    sub $8, %rsp /* the call below needs a 16-byte aligned stack */
    .cfi_adjust_cfa_offset 8
    call \fn
    add $8, %rsp
    .cfi_adjust_cfa_offset -8
    pop %rsi
    .cfi_adjust_cfa_offset -8
    pop %rdi
    .cfi_adjust_cfa_offset -8
    jmp *%rax
.endm

    .text
    .globl dlopen
    .type dlopen, @function
dlopen:
    .cfi_startproc
    endbr64
    mov (%rsp), %rdx /* the caller's return address */
    jump_to_answer_of ct_loader_dlopen_request
    .cfi_endproc
    .size dlopen, .-dlopen

    .globl dlsym
    .type dlsym, @function
dlsym:
    .cfi_startproc
    endbr64
    test %rdi, %rdi /* RTLD_DEFAULT */
    je 1f
    cmp $-1, %rdi /* RTLD_NEXT */
    je 1f
    jmp ct_dlsym_in_handle
1:
    jump_to_answer_of ct_dl_real_sym_address
    .cfi_endproc
    .size dlsym, .-dlsym
#else
#error "the dl trampolines are written for x86-64 only"
#endif
    .section .note.GNU-stack, "", @progbits
