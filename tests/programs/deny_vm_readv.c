/*
 * Runs a program under a seccomp filter that refuses process_vm_readv with
 * EPERM, as a container's default profile does: the collector the program
 * starts inherits the filter, so its outside Python reader meets the same
 * refusal as under Yama's ptrace_scope or another uid, through the same
 * system call. Nothing else is filtered. Usage: deny_vm_readv PROGRAM ARGS...
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog filter = {sizeof code / sizeof code[0], code};
    if (argc < 2) {
        fprintf(stderr, "usage: deny_vm_readv PROGRAM ARGS...\n");
        return 2;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter)) {
        perror("deny_vm_readv: seccomp");
        return 1;
    }
    execvp(argv[1], argv + 1);
    perror("deny_vm_readv: exec");
    return 127;
}
