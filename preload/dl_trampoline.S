/*
 * dlopen as the program sees it: a trampoline that tells the loader view
 * about the request, then jumps (not calls) to glibc's dlopen. glibc
 * resolves a bare name against the RUNPATH and $ORIGIN of the object that
 * called dlopen, which it finds from the return address; a jump leaves the
 * caller's return address where glibc looks for it, so what loads is
 * exactly what would load without us (the cuDNN 9 RUNPATH trap of a
 * wrapper that calls dlopen itself). ct_loader_dlopen_request(file, mode,
 * return address) records the request and returns the address to jump to.
 */
#if defined(__x86_64__)
    .text
    .globl dlopen
    .type dlopen, @function
dlopen:
    .cfi_startproc
    endbr64
    push %rdi
    .cfi_adjust_cfa_offset 8
    push %rsi
    .cfi_adjust_cfa_offset 8
    sub $8, %rsp /* the call below needs a 16-byte aligned stack */
    .cfi_adjust_cfa_offset 8
    mov 24(%rsp), %rdx
    call ct_loader_dlopen_request
    add $8, %rsp
    .cfi_adjust_cfa_offset -8
    pop %rsi
    .cfi_adjust_cfa_offset -8
    pop %rdi
    .cfi_adjust_cfa_offset -8
    jmp *%rax
    .cfi_endproc
    .size dlopen, .-dlopen
#else
#error "the dlopen trampoline is written for x86-64 only"
#endif
    .section .note.GNU-stack, "", @progbits
